"""Session 26's sub-threshold whisper changes stacked and judged as one change (session 27, stack17; issue 11).

    python -m bench.whisper_stack show CANDIDATE [--batch N] > RUN.txt   # bench.whisper_stores --split dev --show
                                                                        # with the candidate in this process
    python -m bench.whisper_stack judge BASE.txt RUN.txt                 # rules 2, 2b and 3 of docs/benchmarks.md,
                                                                        # "Whisper stack, session 27"

`show` also prints whisper's CPU per call (process time of each whisper_respond call, histories included) to stderr.
The candidates were written down with the rule, before either was run (docs/benchmarks.md, "Whisper stack, session
27"); every piece is one session 26 screened, at the value session 26 left it, and nothing here chooses a value:

* `base`: today's whisper (the CPU figure's twin: the same tree, the same counter).
* `A`: ret16's `typed` and `carry` (bench.whisper_ret: the prompt as typed searched too, and on a follow-up the prompt
  with the title of the previous prompt's best hit in front), and near3's `second` at D = 2 (bench.whisper_precision:
  after the cap, a memory the logistic gate passed whose log-odds are more than SECOND_GAP below the best such memory
  injected in the same call is dropped).
* `B` (run only if A fails rule 2, 2b or 3): `typed` and `carry`, and the logistic gate's threshold at -0.30 with
  today's weights (gate11's (ii)).

`judge` reads the dev batches bench.whisper_near.compare reads (every dev batch but the held-out
bench.whisper_gate_fit.FRESH_BATCHES), so batch 18's prompts are never listed; `right` of bench.whisper_ret gives the
held-out batch's total alone.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

CANDIDATES = ("base", "A", "B")
SECOND_GAP = 2.0  # near3's D: the replay's value with the fewest memories dropped (docs/benchmarks.md, session 26)
THRESHOLD_B = -0.30  # gate11's (ii): the threshold every fold of dev 1-16 chose with today's weights
STORE_LOSS_MAX = 2  # rule 3: no store loses more than this


def logistic_passed(cand, conf) -> bool:
    """A memory the logistic gate passed on its own log-odds (not the identity, follow-up, standout or standing
    routes, which set their own thresholds, nor the exploration slot)."""
    return (cand.probability is not None and cand.ce_abs is None and not cand.exploration
            and cand.gate_threshold == conf.gate_logit and cand.gate_score is not None)


def far_below(pool: list, conf, gap: float) -> list:
    """The memories of an injected pool that a second-memory rule drops: the logistic gate's memories whose log-odds
    are more than `gap` below the best logistic memory of the pool."""
    scores = [c.gate_score for c in pool if logistic_passed(c, conf)]
    if len(scores) < 2:
        return []
    best = max(scores)
    return [c for c in pool if logistic_passed(c, conf) and c.gate_score < best - gap]


def _install_second(gap: float) -> None:
    """Replace the arrange stage (order and cap) in whisper_respond's stage list with arrange followed by the
    second-memory drop, in this process only."""
    import whisper.pipeline as pipeline
    from whisper.stages import gate
    from whisper.state import STAGE_GATE

    real = gate.arrange

    def arrange(run, conf, deps):
        decision = real(run, conf, deps)
        dropped = {id(c) for c in far_below(run.pool, conf, gap)}
        if dropped:
            run.drop([c for c in run.pool if id(c) not in dropped], STAGE_GATE)
        return decision

    stages = tuple(arrange if s is real else s for s in pipeline.STAGES)
    pipeline.run_stages.__defaults__ = (stages,)


def install(candidate: str) -> None:
    """Put the candidate's pieces into whisper in this process."""
    from bench.whisper_ret import install as install_texts

    if candidate == "base":
        return
    install_texts("typed+carry")
    if candidate == "A":
        _install_second(SECOND_GAP)
    else:
        os.environ["ORMAH_WHISPER_GATE_LOGIT"] = str(THRESHOLD_B)


def judge(base: Path, run: Path) -> list[str]:
    """bench.whisper_near.compare's lines, batch 17's net apart, and the verdict of rules 2 (net >= +5), 2b (batch
    17 dev, which no session 26 screen saw, net >= -1) and 3 (by store: summed >= 0, none below -STORE_LOSS_MAX)."""
    from bench.prompt_groups import group_of
    from bench.whisper_identity import _dev_prompts, _right
    from bench.whisper_near import compare
    from bench.whisper_show_report import read_show

    lines = compare(base, run)
    a, b = read_show(base), read_show(run)
    net: dict[tuple[str, str], int] = {}
    total = 0
    for p in _dev_prompts():
        change = int(bool(_right(p, b))) - int(bool(_right(p, a)))
        total += change
        for by in ("batch", "store"):
            key = (by, str(group_of(p, by)))
            net[key] = net.get(key, 0) + change
    seventeen = net.get(("batch", "17"), 0)
    stores = {g: n for (by, g), n in net.items() if by == "store"}
    rule2 = total >= 5
    rule2b = seventeen >= -1
    rule3 = sum(stores.values()) >= 0 and min(stores.values(), default=0) >= -STORE_LOSS_MAX
    lines += [f"batch 17 dev (no session 26 screen saw it): net {seventeen:+d}; batches 1-16: net "
              f"{total - seventeen:+d}",
              f"rule 2 (net >= +5): {'pass' if rule2 else 'FAIL'} ({total:+d}); rule 2b (batch 17 dev >= -1): "
              f"{'pass' if rule2b else 'FAIL'}; rule 3 (by store summed >= 0, none below -{STORE_LOSS_MAX}): "
              f"{'pass' if rule3 else 'FAIL'}"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("show", "judge"))
    parser.add_argument("args", nargs="+")
    parser.add_argument("--batch", type=int, help="show: only this batch")
    args = parser.parse_args(argv)
    if args.what == "judge":
        if len(args.args) != 2:
            parser.error("judge needs BASE and RUN")
        print("\n".join(judge(Path(args.args[0]), Path(args.args[1]))))
        return 0
    if len(args.args) != 1 or args.args[0] not in CANDIDATES:
        parser.error(f"show needs one CANDIDATE of {', '.join(CANDIDATES)}")
    from bench.whisper_ret import count_cpu, cpu_line
    from bench.whisper_stores import main as stores_main

    install(args.args[0])
    spent = count_cpu()
    code = stores_main(["--split", "dev", "--show", *(["--batch", str(args.batch)] if args.batch else [])])
    print(cpu_line(spent), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
