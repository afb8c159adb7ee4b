"""How far whisper's outcomes move for a change that should move nothing: the null distribution of the keep rule's
statistics (session 27, noise17; issue 11; docs/benchmarks.md "Whisper noise floor, session 27").

    python -m bench.whisper_null show rerun > RUN.txt               # today's bench again (node ids are uuid4)
    python -m bench.whisper_null show jitter --seed 1 > RUN.txt     # every memory 0-2 s earlier, ties reordered
    python -m bench.whisper_null show drop --store club > RUN.txt   # without one store and the prompts about it
    python -m bench.whisper_null show noise --sigma 0.1 --seed 1    # the logistic gate's log-odds + N(0, sigma)
    python -m bench.whisper_null judge BASE.txt RUN.txt             # made / broken / net by batch and store, rules 2-3
    python -m bench.whisper_null table BASE.txt RUN.txt ...         # one row per null run, and their spread
    python -m bench.whisper_null pairs RUN.txt RUN.txt ...          # every pair of runs judged both ways (noise
                                                                    # seeds at one sigma: an exchangeable null)

Each perturbation is installed in this process only (it replaces the loader's `load_whisper` or `merged_memories`,
which bench.whisper_stores.seed_stores reads at call time); nothing here edits whisper or memory. Why each is null:

* rerun: the same tree and data again; only the node ids differ (uuid4 per memory), which no user sees.
* jitter: the memories are written in a shuffled order and each one's `created` is moved 0, 1 or 2 seconds earlier
  (seeded); the memories are days to years old at the scenarios' clock, so a second is no fact about them, and the
  100 memories that share a timestamp with another are written in a new order (new row ids).
* drop: one store's memories are left out, with every prompt whose labels name that store or that is about it
  (bench.prompt_groups.group_of); the prompts left neither need nor mention a memory of it, so its memories were
  only distractors for them (as the choir's 45 were for dev 1-17 at the opening).
* noise: every logistic-gate log-odds gets a draw of N(0, sigma), fixed by the seed, the prompt and the memory's
  title and content (`nudge`). It is no user-visible rule but the null of a whisper CHANGE: a change that knows
  nothing about which memory is right, yet moves borderline memories across the gate as a real change does. Its
  expected net is zero or below (noise on a fitted score can only blur it), so the chance that it passes a rule
  bounds the rule's false-pass rate from below.

`judge` and `table` read the dev batches bench.whisper_near.compare reads (every dev batch but the held-out
bench.whisper_gate_fit.FRESH_BATCHES) prompt by prompt, a prompt only when both runs have a line for it; of the
held-out batch they give the number fully right alone (no prompt of it is listed).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

PERTURBATIONS = ("rerun", "jitter", "drop", "noise")
NET_BAR = 5  # rule 2 as written: net over dev 1-17 at least +5
STORE_LOSS_MAX = 2  # rule 3: no store losing more than 2
JITTER_SECONDS = 2  # jitter moves a memory back by 0..JITTER_SECONDS seconds


def touches(prompt: dict, store: str) -> bool:
    """Whether a prompt's labels name a memory of the store (by key prefix) or the prompt is about it (group_of)."""
    from bench.prompt_groups import STORE_OF_KEY, group_of

    keys = list(prompt.get("expect", ())) + list(prompt.get("accept", ()))
    return group_of(prompt, "store") == store or any(STORE_OF_KEY.get(k[0]) == store for k in keys)


def jittered(memories: tuple[dict, ...], seed: int) -> tuple[dict, ...]:
    """The memories shuffled, each `created` moved 0..JITTER_SECONDS seconds earlier (never later: nothing moves
    past the scenarios' clock); the seed fixes both."""
    rng = random.Random(seed)
    out = []
    for m in rng.sample(list(memories), len(memories)):
        created = datetime.fromisoformat(m["created"].replace("Z", "+00:00"))
        moved = created - timedelta(seconds=rng.randint(0, JITTER_SECONDS))
        out.append({**m, "created": moved.isoformat().replace("+00:00", "Z")})
    return tuple(out)


def nudge(candidates: list, prompt: str, *, sigma: float, seed: int) -> None:
    """Add N(0, sigma) to each candidate's gate score; the draw depends on the seed, the prompt and the memory's
    title and content only (node ids are fresh uuid4s each run), so every run with the seed draws the same."""
    for c in candidates:
        draw = random.Random(f"{seed}\x00{prompt}\x00{c.title}\x00{c.content}").gauss(0.0, sigma)
        c.gate_score = round(c.gate_score + draw, 4)


def _install_noise(sigma: float, seed: int) -> None:
    """Nudge the logistic gate's log-odds right after whisper computes them (`whisper.stages.gate.apply_logistic`,
    which `injection_gate` calls by its module name), in this process only."""
    import whisper.stages.gate as gate

    real = gate.apply_logistic

    def apply_logistic(run, conf, deps=None):
        real(run, conf, deps)
        nudge(gate.logistic_hits(run), run.prompt, sigma=sigma, seed=seed)

    gate.apply_logistic = apply_logistic


def install(perturbation: str, *, seed: int = 1, store: str | None = None, sigma: float = 0.1) -> None:
    """Put the perturbation in place in this process."""
    import bench.datasets.loader as loader

    if perturbation == "noise":
        _install_noise(sigma, seed)
    elif perturbation == "jitter":
        real = loader.merged_memories

        def merged_memories(stores=loader.STORES):
            memories, edges = real(stores)
            return jittered(memories, seed), edges

        loader.merged_memories = merged_memories
    elif perturbation == "drop":
        if store not in loader.STORES:
            raise ValueError(f"drop needs --store, one of {', '.join(loader.STORES)}")
        real_load = loader.load_whisper

        def load_whisper():
            scenarios = real_load()
            return replace(scenarios, stores=tuple(s for s in scenarios.stores if s != store),
                           prompts=tuple(p for p in scenarios.prompts if not touches(p, store)))

        loader.load_whisper = load_whisper


def sign_p(made: int, broken: int) -> float:
    """One-sided sign test: the chance of at least `made` of made+broken outcomes going up if each were a fair
    coin (the null of a change that moves outcomes at random)."""
    n = made + broken
    return sum(math.comb(n, k) for k in range(made, n + 1)) / 2 ** n if n else 1.0


@dataclass
class Verdict:
    """One run against the base on the dev batches both have lines for."""

    prompts: int = 0
    made: int = 0
    broken: int = 0
    by_batch: dict[str, int] = field(default_factory=dict)
    by_store: dict[str, int] = field(default_factory=dict)
    held_base: int = 0  # the held-out batch: fully right in the base (a total, nothing listed)
    held_run: int = 0
    held_prompts: int = 0
    direct: int = 0  # made or broken prompts on which the base injected a memory of a store the run left out

    @property
    def net(self) -> int:
        return self.made - self.broken

    @property
    def churn(self) -> int:
        return self.made + self.broken

    @property
    def rule2(self) -> bool:
        return self.net >= NET_BAR

    @property
    def rule3(self) -> bool:
        return sum(self.by_store.values()) >= 0 and min(self.by_store.values(), default=0) >= -STORE_LOSS_MAX

    @property
    def worst_store(self) -> int:
        return min(self.by_store.values(), default=0)


def verdict(prompts: list[dict], held: list[dict], a: dict, b: dict, *, absent: str | None = None) -> Verdict:
    """Score run b against base a: dev prompts (both runs have a line) made and broken, net by batch and store; the
    held-out prompts counted fully right, in total only. `absent`: the store the run left out (drop), whose memories
    the base injected on a changed prompt are counted (`direct`: a real effect of the drop, not noise)."""
    from bench.prompt_groups import STORE_OF_KEY, group_of
    from bench.whisper_identity import _right

    v = Verdict()
    for p in prompts:
        before, after = _right(p, a), _right(p, b)
        if before is None or after is None:
            continue
        v.prompts += 1
        for by, net in (("batch", v.by_batch), ("store", v.by_store)):
            g = str(group_of(p, by))
            net[g] = net.get(g, 0) + (after - before)
        v.made += after and not before
        v.direct += before != after and any(STORE_OF_KEY.get(k[0]) == absent for k in a[p["id"]][0])
        v.broken += before and not after
    for p in held:
        before, after = _right(p, a), _right(p, b)
        if before is not None and after is not None:
            v.held_prompts += 1
            v.held_base += before
            v.held_run += after
    return v


def _prompts() -> tuple[list[dict], list[dict]]:
    """(the dev prompts judged, the held-out batches' dev prompts)."""
    import json

    from bench.datasets.loader import SEALED_BATCHES
    from bench.whisper_identity import _dev_prompts, _held_out

    data = json.loads((Path(__file__).parent / "datasets" / "whisper.json").read_text())
    held = [p for p in data["prompts"] if p.get("split") == "dev" and p.get("batch", 1) in _held_out()
            and p.get("batch", 1) not in SEALED_BATCHES]
    return _dev_prompts(), held


def judge(base: Path, run: Path, absent: str | None = None) -> Verdict:
    from bench.whisper_show_report import read_show

    prompts, held = _prompts()
    return verdict(prompts, held, read_show(base), read_show(run), absent=absent)


def dropped_store(run: Path) -> str | None:
    """The store a run file named drop_STORE.txt left out (the name `show drop --store STORE` runs are saved as)."""
    return run.stem.removeprefix("drop_") if run.stem.startswith("drop_") else None


def judge_lines(v: Verdict) -> list[str]:
    from bench.whisper_identity import dev_label

    def groups(net: dict[str, int]) -> str:
        return ", ".join(f"{g} {n:+d}" for g, n in sorted(net.items(), key=lambda kv: (len(kv[0]), kv[0])))

    return [f"{dev_label()}: {v.prompts} prompts; made {v.made}, broken {v.broken}, net {v.net:+d}, churn {v.churn}; "
            f"sign test p {sign_p(v.made, v.broken):.3f}",
            f"by batch: {groups(v.by_batch)}", f"by store: {groups(v.by_store)}",
            f"rule 2 (net >= +{NET_BAR}): {'pass' if v.rule2 else 'fail'}; rule 3 (stores summed >= 0, none below "
            f"-{STORE_LOSS_MAX}): {'pass' if v.rule3 else 'fail'}",
            f"held-out dev (totals only): {v.held_base} -> {v.held_run} fully right of {v.held_prompts}",
            f"changed through a memory of the store left out (the base injected it): {v.direct}"]


def table(base: Path, runs: list[Path]) -> list[str]:
    """One row per null run and the spread of net, churn and the store sums across them."""
    verdicts = [(r.stem, judge(base, r, dropped_store(r))) for r in runs]
    lines = ["| run | prompts | made | broken | net | churn | p (sign) | store sum | worst store | rule 2 | rule 3 "
             "| held-out dev | via the dropped store |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---:|---:|"]
    for name, v in verdicts:
        lines.append(f"| {name} | {v.prompts} | {v.made} | {v.broken} | {v.net:+d} | {v.churn} | "
                     f"{sign_p(v.made, v.broken):.2f} | {sum(v.by_store.values()):+d} | {v.worst_store:+d} | "
                     f"{'pass' if v.rule2 else 'fail'} | {'pass' if v.rule3 else 'fail'} | "
                     f"{v.held_run - v.held_base:+d} | {v.direct} |")
    if len(verdicts) > 1:
        nets = [v.net for _, v in verdicts]
        churns = [v.churn for _, v in verdicts]
        worst = [v.worst_store for _, v in verdicts]
        held = [v.held_run - v.held_base for _, v in verdicts]
        z = [v.net / math.sqrt(v.churn) for _, v in verdicts if v.churn]
        lines += ["", f"net: mean {statistics.fmean(nets):+.1f}, sd {statistics.stdev(nets):.1f}, range "
                      f"{min(nets):+d}..{max(nets):+d}; |net| >= {NET_BAR} in {sum(abs(n) >= NET_BAR for n in nets)} "
                      f"of {len(nets)}",
                  f"churn: mean {statistics.fmean(churns):.1f}, range {min(churns)}..{max(churns)}; net/sqrt(churn): "
                  f"sd {statistics.pstdev(z) if z else 0:.2f} (a fair coin per outcome: 1)",
                  f"worst store: range {min(worst):+d}..{max(worst):+d}; held-out dev moved: range "
                  f"{min(held):+d}..{max(held):+d}",
                  f"rules 2 and 3 both passed: {sum(v.rule2 and v.rule3 for _, v in verdicts)} of {len(verdicts)}"]
    return lines


def pairs(runs: list[Path], alpha: float = 0.05) -> list[str]:
    """Every pair of runs judged both ways (each in turn the base). For runs of one perturbation under different
    seeds neither is better by design, so the ordered comparisons are draws of a change worth nothing: how often
    each bar (rule 2 and 3 as written; a one-sided sign test at `alpha`) keeps one is its false-pass rate."""
    from itertools import permutations

    from bench.whisper_show_report import read_show

    prompts, held = _prompts()
    shows = {r: read_show(r) for r in runs}
    rows = [(a.stem, b.stem, verdict(prompts, held, shows[a], shows[b])) for a, b in permutations(runs, 2)]
    lines = ["| base | run | made | broken | net | churn | p (sign) | worst store | rules 2+3 | held-out dev |",
             "|---|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    lines += [f"| {a} | {b} | {v.made} | {v.broken} | {v.net:+d} | {v.churn} | {sign_p(v.made, v.broken):.3f} | "
              f"{v.worst_store:+d} | {'pass' if v.rule2 and v.rule3 else 'fail'} | {v.held_run - v.held_base:+d} |"
              for a, b, v in rows if a < b or len(runs) == 2]
    if rows:
        nets, churns = [v.net for *_, v in rows], [v.churn for *_, v in rows]
        lines += ["", f"{len(rows)} ordered comparisons: net sd {statistics.pstdev(nets):.1f} (mean churn "
                      f"{statistics.fmean(churns):.1f}, sqrt {math.sqrt(statistics.fmean(churns)):.1f}); "
                      f"rules 2+3 pass {sum(v.rule2 and v.rule3 for *_, v in rows)}; sign test p <= {alpha} "
                      f"{sum(sign_p(v.made, v.broken) <= alpha for *_, v in rows)}; held-out dev moved by more than 1: "
                      f"{sum(abs(v.held_run - v.held_base) > 1 for *_, v in rows)}"]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("show", "judge", "table", "pairs"))
    parser.add_argument("args", nargs="+", help="show: PERTURBATION; judge: BASE RUN; table: BASE RUN...")
    parser.add_argument("--seed", type=int, default=1, help="jitter, noise: the seed")
    parser.add_argument("--store", help="drop: the store left out (judge: read from a drop_STORE.txt name if absent)")
    parser.add_argument("--sigma", type=float, default=0.1, help="noise: the sd of the draw added to the log-odds")
    args = parser.parse_args(argv)
    if args.what == "judge":
        if len(args.args) != 2:
            parser.error("judge needs BASE and RUN")
        run = Path(args.args[1])
        print("\n".join(judge_lines(judge(Path(args.args[0]), run, args.store or dropped_store(run)))))
        return 0
    if args.what == "table":
        if len(args.args) < 2:
            parser.error("table needs BASE and at least one RUN")
        print("\n".join(table(Path(args.args[0]), [Path(a) for a in args.args[1:]])))
        return 0
    if args.what == "pairs":
        if len(args.args) < 2:
            parser.error("pairs needs at least two RUNs")
        print("\n".join(pairs([Path(a) for a in args.args])))
        return 0
    if len(args.args) != 1 or args.args[0] not in PERTURBATIONS:
        parser.error(f"show needs one PERTURBATION of {', '.join(PERTURBATIONS)}")
    from bench.whisper_ret import count_cpu, cpu_line
    from bench.whisper_stores import main as stores_main

    install(args.args[0], seed=args.seed, store=args.store, sigma=args.sigma)
    spent = count_cpu()
    code = stores_main(["--split", "dev", "--show"])
    print(cpu_line(spent), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
