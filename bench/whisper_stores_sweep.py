"""The gate sweep of bench.whisper_stores (`--sweep`): one run of the split with the gates open, then hit rate,
precision and silence per (gate, min cosine, relative, cap, identity gate) read back from the decision ledger.
That is how the gate is tuned, on dev only."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

SWEEP = [round(0.05 * i, 2) for i in range(1, 20)]
RELATIVE = (0.0, 0.7)
MIN_COSINE = (0.0, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55)
CAPS = (1, 2, 3, 6)
IDENTITY_GATES = (0.25, 0.35, 0.45, 0.55, 1.0)
GATE_MARK, IDENTITY_MARK = 0.0001, 0.0002  # the open gates of a sweep: every candidate passes, the ledger tells which


def open_gates() -> None:
    """Open every gate (before Django reads the settings): each candidate passes with a mark telling which gate it
    faced, and the ledger holds its score."""
    os.environ["ORMAH_WHISPER_GATE_NO_RERANKER"] = str(GATE_MARK)
    os.environ["ORMAH_WHISPER_IDENTITY_GATE"] = str(IDENTITY_MARK)
    os.environ["ORMAH_WHISPER_GATE_RELATIVE"] = "0"
    os.environ["ORMAH_WHISPER_GATE_WEIGHTS"] = "off"  # the ledger then holds g, the logistic gate's input


def _ledger(result, keys: dict[str, str]) -> list[tuple[float, str, bool, bool, float]]:
    """(gate score, key, faced the identity gate, is a recall hit, raw cosine, score) of every candidate that reached
    the gate (already-served ones too: whether they were served depends on the threshold; identity memories recall
    did not return too, whatever their cosine, so a dump shows what an identity rule could use)."""
    from whisper.models import WhisperCandidateRow

    rows = WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id, gate_score__isnull=False)
    return [(c.gate_score, keys.get(c.node_uid, c.node_uid), c.gate_threshold == IDENTITY_MARK, c.source != "identity",
             c.raw_cosine or 0.0, c.retrieval_score or 0.0) for c in rows]


def _passed(cands, t: float, tc: float, rel: float, cap: int, identity_gate: float, strong: float,
            served=frozenset()) -> list[str]:
    """What the gate would inject at one setting: recall's hits first, best first, capped."""
    cands = [c for c in cands if c[1] not in served]
    best = max((g for g, _, ident, prob, *_ in cands if prob and not ident), default=0.0)
    ordered = sorted(cands, key=lambda c: (not c[3], -c[5]))  # as arrange: recall's hits first, by score

    def passes(g, ident, prob, cos) -> bool:
        if ident:
            return g >= identity_gate
        if not prob:
            return g >= strong
        return cos >= strong or (g >= t and cos >= tc and g >= rel * best)

    return [k for g, k, ident, prob, cos, *_ in ordered if passes(g, ident, prob, cos)][:cap]


def sweep(prompts, ids: dict[str, str], now, dump: Path | None = None) -> dict[tuple, tuple[float, float, float]]:
    """(gate, min cosine, relative, cap, identity gate) -> (hit rate, precision, silence), from one run with the
    gates open.

    Each candidate's gate score and the gate it faced (main or identity, told apart by their marks) are read back
    from the ledger, for the history prompts too; a setting then keeps, per prompt, the candidates at or above the
    gate, the cosine floor and `relative` x the best probability, capped at `cap` (recall's hits first, as arrange
    orders them), leaving out what the history would already have served at that setting (which counts as
    delivered, as in run_one). The stages before the gate do not depend on it, so the sweep is exact for the gate
    alone (except that a history prompt always feeds the session's topic-repeat check)."""
    from whisper.conf import get_conf as whisper_conf
    from whisper.services import whisper_respond

    conf = whisper_conf()
    keys = {v: k for k, v in ids.items()}
    runs = []  # (prompt, [history candidates], final candidates)
    for p in prompts:
        session, history = f"sweep-{p['id']}", p.get("history", [])
        earlier = [_ledger(whisper_respond(prompt=h, session_id=session, space=p.get("space"),
                                           now=now - timedelta(seconds=30 * (len(history) - i))), keys)
                   for i, h in enumerate(history)]
        final = _ledger(whisper_respond(prompt=p["prompt"], session_id=session, space=p.get("space"), now=now), keys)
        runs.append((p, earlier, final))
    if dump:
        dump.write_text(json.dumps(runs))  # for bench/whisper_gate_fit.py
    out = {}
    grid = ((t, tc, rel, cap, ig) for t in SWEEP for tc in MIN_COSINE for rel in RELATIVE for cap in CAPS
            for ig in IDENTITY_GATES)
    for t, tc, rel, cap, ig in grid:
        hits = inject = silent = silent_ok = injected = correct = 0
        for p, earlier, final in runs:
            args = (t, tc, rel, cap, ig, conf.overlap_cosine_floor)
            served = frozenset(k for cands in earlier for k in _passed(cands, *args))
            passed = _passed(final, *args, served)
            good = set(p.get("expect", [])) | set(p.get("accept", []))
            injected += len(passed)
            correct += sum(k in good for k in passed)
            if p["kind"] == "inject":
                inject += 1
                hits += bool(set(p["expect"]) & (set(passed) | served))
            else:
                silent += 1
                silent_ok += not passed
        out[(t, tc, rel, cap, ig)] = (hits / inject, correct / injected if injected else 1.0, silent_ok / silent)
    return out


def print_sweep(table: dict[tuple, tuple[float, float, float]], split: str, prompts: int) -> None:
    """The sweep's table at the configured cap, and the best settings that keep precision and silence."""
    from whisper.conf import get_conf as whisper_conf

    cap = whisper_conf().max_nodes
    print(f"Gate sweep on {split} ({prompts} prompts), cap {cap}, relative 0: hit rate / precision / "
          "silence\n| gate | " + " | ".join(f"cosine >= {c}" for c in MIN_COSINE) + " |\n|---|"
          + "---|" * len(MIN_COSINE))
    for t in SWEEP:
        cells = ("{:.2f} / {:.2f} / {:.2f}".format(*table[(t, c, 0.0, cap, IDENTITY_GATES[0])]) for c in MIN_COSINE)
        print(f"| {t:.2f} | " + " | ".join(cells) + " |")
    ok = sorted(((v[0], v[1], k) for k, v in table.items() if v[1] >= 0.9 and v[2] >= 0.95), reverse=True)
    print("Best (gate, min cosine, relative, cap, identity gate) with precision >= 0.9 and silence >= 0.95: "
          + "; ".join(f"{k} hit {h:.3f} precision {p:.3f}" for h, p, k in ok[:8]))
