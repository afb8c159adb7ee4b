"""conventions_warm: what a web worker's first whisper call would otherwise compute alone, computed once in the master
before it forks (ormah_site/gunicorn_conf.py `preload`)."""

from __future__ import annotations

from memory import runtime
from memory.domain.node import utcnow
from whisper import selectors
from whisper.conf import get_conf
from whisper.conventions import warm_first_sentences


def conventions_warm(*, embedder=None) -> None:
    """Embed the first sentences of the identity set into this process's cache (whisper.conventions): the workers
    forked after it share them, and a later call embeds only the memories added or edited since. Nothing when the
    standouts do not apply (no logistic gate, or a reranker configured: whisper.stages.retrieve)."""
    conf = get_conf()
    if conf.gate_weights and not conf.reranker:
        warm_first_sentences(embedder or runtime.embedder(), selectors.identity_hits(now=utcnow()),
                             min_set=conf.standout_min_set)
