"""LLM providers, chosen by setting (`none`, `openai`, or a dotted path), and the prompts the jobs send them."""

from __future__ import annotations

import importlib

from maintenance.conf import LLMConf
from maintenance.llm.base import LLMProvider


def llm_for_run(conf: LLMConf, *, deadline: float | None = None) -> LLMProvider | None:
    """A fresh provider for one job run (its own call budget), or None when no LLM is configured.

    `deadline` (time.monotonic) is the run's time bound; a provider with a `deadline` attribute gets it and
    cuts its requests, retries and backoff to it (raising LLMOutOfTime), so a slow endpoint cannot overrun the job.
    """
    if not conf.provider:
        return None
    module, _, name = conf.provider.rpartition(".")
    provider = getattr(importlib.import_module(module), name)(conf)
    if deadline is not None and hasattr(provider, "deadline"):
        provider.deadline = deadline
    return provider


__all__ = ["LLMProvider", "llm_for_run"]
