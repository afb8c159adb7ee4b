"""An embedder that kills its own process (SIGKILL, no cleanup) when asked to embed a text holding MARKER.

For the kill tests of tests/maintenance/test_decide_kill.py: the index flush of a write unit embeds the new text of
a memory after its file was written and before the index transaction commits, so a merged text holding the marker
stops the process exactly between a merge's file writes and its commit. Every other text is embedded by the real
model.
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
