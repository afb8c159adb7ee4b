"""Prototype, offline: gate inputs from the prompt's segments and the memory's sentences (session 14, dev only).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_segments /tmp/dev-gate.json /tmp/dev-gate-seg.json
    python -m bench.whisper_gate_study /tmp/dev-gate-seg.json --keep g,cosine,best,margin,own_titled,overview,seg_best

Adds to every dumped candidate a `seg` record, computed with the real model (bench.datasets.embed_cache): its
cosine to the call's question sentence(s) alone (`q`), to the prompt's prose without code blocks, tracebacks and
log lines (`prose`), and, for a note of several sentences, the best cosine of the prompt (`sent`) and of its question
(`sent_q`) to any one of its sentences. The inputs of bench/whisper_gate_extras.py SEGMENTS read it. Pages (over
1,000 characters) are represented by recall's matched passage already: their sentence figures are their cosine.
"""

from __future__ import annotations

import json
import re
import sys
import time

import numpy as np

PAGE_CHARS = 1000
FENCE = re.compile(r"```.*?(```|$)", re.S)
SENTENCE_END = re.compile(r"(?<=[.?!])\s+|\n+")
# A line of pasted output rather than prose: indented, a traceback frame, a shell or REPL line, a log record, or
# mostly symbols.
MACHINE_LINE = re.compile(
    r"^(\s{4,}|\t|Traceback |  File \"|\$ |>>> |\[?\d{4}-\d\d-\d\d|\w+(Error|Exception):|(DEBUG|INFO|WARNING|ERROR)\b)")


def machine_line(line: str) -> bool:
    s = line.strip()
    if not s:
        return False
    if MACHINE_LINE.match(line):
        return True
    letters = sum(ch.isalpha() or ch.isspace() for ch in s)
    return letters < 0.6 * len(s)


def prose(prompt: str) -> str:
    """The prompt without fenced code blocks and lines of pasted output (its lines kept: they end sentences)."""
    text = FENCE.sub("\n", prompt)
    return "\n".join(line.strip() for line in text.splitlines() if line.strip() and not machine_line(line))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(text) if s and len(s.strip()) > 2]


def question(prompt: str) -> str:
    """The question sentence(s) of the prose: those ending with "?", else the last sentence."""
    parts = sentences(prose(prompt))
    asked = [s for s in parts if s.endswith("?")]
    return " ".join(asked) if asked else (parts[-1] if parts else "")


def memory_sentences(content: str) -> list[str]:
    return [s for s in sentences(content) if len(s.split()) >= 3]


def main(argv: list[str]) -> int:
    from bench.whisper_quality import setup_django

    src, dst = argv[0], argv[1]
    import tempfile

    from pathlib import Path

    setup_django(Path(tempfile.mkdtemp(prefix="seg-")))
    from bench.datasets.embed_cache import CachedEmbedder
    from bench.datasets.loader import merged_memories

    emb = CachedEmbedder()
    memories = {m["key"]: m for m in merged_memories()[0]}
    sent_vecs: dict[str, np.ndarray | None] = {}
    for key, m in memories.items():
        content = m.get("content") or ""
        parts = memory_sentences(content) if len(content) <= PAGE_CHARS else []
        sent_vecs[key] = emb.embed_documents(parts) if len(parts) >= 2 else None
    dump = json.loads(open(src).read())
    qcpu, n_q = 0.0, 0
    for item in dump:
        p = item["prompt"]
        texts = list(p.get("history", [])) + [p["prompt"]]
        for text, call in zip(texts, item["calls"]):
            if not call:
                continue
            whole = emb.embed_query(" ".join(text.split()))
            started = time.process_time()
            pr, q = " ".join(prose(text).split()), question(text)
            vp = emb.embed_query(pr) if pr and pr != " ".join(text.split()) else None
            vq = emb.embed_query(q) if q and q not in (pr, " ".join(text.split())) else None
            qcpu += time.process_time() - started
            n_q += 1
            for c in call:
                m = memories.get(c["key"])
                if m is None:
                    continue
                cvec = emb.embed_documents([m.get("content") or ""])[0] if c["chars"] <= PAGE_CHARS else None
                seg = {"has_q": vq is not None, "has_prose": vp is not None}
                # Against the memory's own content vector, then moved onto the dump's cosine (recall's, over the
                # indexed text) by the difference: the inputs compare like with like.
                base = c["cosine"]
                own = float(cvec @ whole) if cvec is not None else base
                seg["q"] = base + float(cvec @ vq) - own if vq is not None and cvec is not None else base
                seg["prose"] = base + float(cvec @ vp) - own if vp is not None and cvec is not None else base
                sv = sent_vecs.get(c["key"])
                if sv is not None:
                    seg["sent"] = float((sv @ whole).max())
                    seg["sent_q"] = float((sv @ (vq if vq is not None else whole)).max())
                    seg["n_sent"] = len(sv)
                else:
                    seg["sent"] = seg["sent_q"] = base
                    seg["n_sent"] = 1
                c["seg"] = seg
    open(dst, "w").write(json.dumps(dump))
    print(f"{n_q} calls; segment query embeddings: {1000 * qcpu / max(n_q, 1):.1f} ms CPU per call (mean)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
