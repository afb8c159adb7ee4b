"""Embedders that act when asked to embed a text holding MARKER, for tests/maintenance/test_decide_kill.py.

The index flush of a write unit embeds the new text of a memory after its file was written and before the index
transaction commits, so a text holding the marker picks an exact moment inside a service: DyingEmbedder kills its
own process there (SIGKILL, no cleanup); HandEditingEmbedder appends a line to the file named by
ORMAH_TEST_EDIT_FILE, as a person's editor would mid-write. Every text is embedded by the real model.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Sequence

import numpy as np

from memory.embeddings import FastEmbedEmbedder

MARKER = "zeppelin-tangerine-kill"


class DyingEmbedder(FastEmbedEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any(MARKER in t for t in texts):
            os.kill(os.getpid(), signal.SIGKILL)
        return super().embed_documents(texts)


class HandEditingEmbedder(FastEmbedEmbedder):
    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if any(MARKER in t for t in texts):
            with open(os.environ["ORMAH_TEST_EDIT_FILE"], "a", encoding="utf-8") as f:
                f.write("\nEdited by hand meanwhile.\n")
        return super().embed_documents(texts)
