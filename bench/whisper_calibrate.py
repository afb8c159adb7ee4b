"""Calibrate whisper's no-reranker gate on the labelled scenario set (cosine scale).

    python -m bench.whisper_calibrate [--show]

Runs every scenario with the gate open (0.0), reads each candidate's gate score from the decision ledger, and
sweeps the gate: for each threshold, which memories would be injected, and the resulting precision, recall and
silence accuracy. Prompts silenced before the gate (synthetic, acknowledgements, conversational, repeats) stay
silent whatever the threshold, so the sweep is exact for the gate alone.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from bench.whisper_quality import load_scenarios, seed, setup_django

THRESHOLDS = [round(0.36 + 0.02 * i, 2) for i in range(18)]
IDENTITY_THRESHOLDS = [round(0.10 + 0.05 * i, 2) for i in range(9)]
IDENTITY_MARK = 0.0001  # the identity gate during the run, so the ledger tells which gate a candidate faced


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print every candidate that reached the gate")
    args = parser.parse_args(argv)
    os.environ["ORMAH_WHISPER_GATE_NO_RERANKER"] = "0.0"
    os.environ["ORMAH_WHISPER_IDENTITY_GATE"] = str(IDENTITY_MARK)
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-cal-") as tmp:
        setup_django(Path(tmp))
        from whisper.models import WhisperCandidateRow
        from whisper.services import whisper_respond

        memories, prompts = load_scenarios()
        now = datetime.now(UTC)
        ids = seed(memories, now=now)
        keys = {v: k for k, v in ids.items()}
        rows = []  # (prompt, key, gate_score, faced the identity gate?, relevant)
        for p in prompts:
            session = f"cal-{p['id']}"
            for earlier in p.get("history", []):
                whisper_respond(prompt=earlier, session_id=session, space=p.get("space"), now=now)
            result = whisper_respond(prompt=p["prompt"], session_id=session, space=p.get("space"), now=now)
            good = set(p.get("expect", [])) | set(p.get("accept", []))
            for c in WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id):
                if c.gate_score is None or c.stage == "already_served":
                    continue
                key = keys.get(c.node_uid, c.node_uid)
                rows.append((p, key, c.gate_score, c.gate_threshold == IDENTITY_MARK, key in good))
                if args.show:
                    print(f"{p['id']:4} {'+' if key in good else '-'} g={c.gate_score:.3f} cos={c.raw_cosine} "
                          f"{'identity' if c.gate_threshold == IDENTITY_MARK else '':8} {c.stage:12} {key}")
        gate, identity_gate = _defaults()
        print(f"Gate sweep (identity gate fixed at {identity_gate}):")
        _table(rows, prompts, [(t, identity_gate) for t in THRESHOLDS], 0)
        print(f"\nIdentity gate sweep (gate fixed at {gate}):")
        _table(rows, prompts, [(gate, t) for t in IDENTITY_THRESHOLDS], 1)
    return 0


def _defaults() -> tuple[float, float]:
    """The shipped gates (the dataclass defaults; the run itself overrides them through the environment)."""
    from whisper.conf import WhisperConf

    return WhisperConf().gate_no_reranker, WhisperConf().identity_gate


def _table(rows, prompts, pairs, column) -> None:
    """Precision, recall and silence accuracy for each (gate, identity gate) pair."""
    print("| gate | precision | recall | silence accuracy |\n|---|---|---|---|")
    expected = sum(len(p["expect"]) for p in prompts if p["kind"] == "inject")
    silent = [p for p in prompts if p["kind"] == "silent"]
    for gate, identity_gate in pairs:
        passed = [r for r in rows if r[2] >= (identity_gate if r[3] else gate)]
        correct = sum(1 for r in passed if r[4])
        found = sum(1 for r in passed if r[1] in r[0].get("expect", []))
        noisy = {r[0]["id"] for r in passed if r[0]["kind"] == "silent"}
        print(f"| {(gate, identity_gate)[column]:.2f} | {correct / len(passed) if passed else 1:.3f} "
              f"({correct}/{len(passed)}) | {found / expected:.3f} | {(len(silent) - len(noisy)) / len(silent):.3f} |")


if __name__ == "__main__":
    sys.exit(main())
