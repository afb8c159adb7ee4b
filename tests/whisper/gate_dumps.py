"""Synthetic gate dumps for the tests of the gate benches (bench.whisper_gate_held, bench.whisper_gate_lobo): literal
dicts in the format of `bench.whisper_stores --gate-dump`; tests/whisper/test_gate_trees.py builds its dumps here too."""

from __future__ import annotations

import numpy as np


def row(key: str, score: float, inputs: list[float], route: str = "logistic") -> dict:
    """One hit of a gate call: its memory key, score and gate inputs (`route`: the logistic gate's unless said)."""
    return {"key": key, "route": route, "cosine": 0.5, "score": score, "recall": True, "g": 0.5, "inputs": inputs}


def item(pid: str, kind: str, call: list[dict], batch: int = 1, expect: tuple[str, ...] = ()) -> dict:
    """One prompt of the dump with its one gate call."""
    p = {"id": pid, "prompt": "q", "kind": kind, "category": "project" if kind == "inject" else "off_topic",
         "batch": batch, "expect": list(expect)}
    return {"prompt": p, "calls": [call]}


def gate_dump(*, seed: int, per_batch: int, batches: tuple[int, ...], by_store: bool = False) -> list[dict]:
    """Two prompts in three should inject: their answer and a wrong memory among the gate's hits; the third stays
    silent: a wrong memory. The answer's first input runs higher. Answer keys are "m<batch>-<i>" and wrong ones
    "w<batch>-<i>"; `by_store`: the keys of should-inject prompts start with their store instead, "d" or "l" by turns
    ("d9-1" and its wrong "dw9-1")."""
    rng = np.random.default_rng(seed)
    out = []
    for b in batches:
        for i in range(per_batch):
            right = [float(rng.normal(1.0)), *rng.normal(size=8)]
            wrong = [float(rng.normal(-0.5)), *rng.normal(size=8)]
            if i % 3:
                store = ("d" if i % 2 else "l") if by_store else ""
                answer = f"{store or 'm'}{b}-{i}"
                out.append(item(f"{b}-{i}", "inject", [row(answer, 0.9, right), row(f"{store}w{b}-{i}", 0.5, wrong)],
                                b, (answer,)))
            else:
                out.append(item(f"{b}-{i}", "silent", [row(f"w{b}-{i}", 0.5, wrong)], b))
    return out
