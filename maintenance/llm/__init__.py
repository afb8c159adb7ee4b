"""LLM providers, chosen by setting (`none`, `openai`, or a dotted path), and the prompts the jobs send them."""

from __future__ import annotations

import importlib

from maintenance.conf import LLMConf
from maintenance.llm.base import LLMProvider


def llm_for_run(conf: LLMConf) -> LLMProvider | None:
    """A fresh provider for one job run (its own call budget), or None when no LLM is configured."""
    if not conf.provider:
        return None
    module, _, name = conf.provider.rpartition(".")
    return getattr(importlib.import_module(module), name)(conf)


__all__ = ["LLMProvider", "llm_for_run"]
