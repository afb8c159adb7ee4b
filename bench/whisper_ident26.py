"""Which prompts have the identity set's standouts measured, and at which standard score: session 26's candidates
(issue 11; docs/benchmarks.md "Whisper identity, session 26").

    python -m bench.whisper_ident26 show today --z 4.5 > RUN.txt       # one full dev run (--split dev --show)
    python -m bench.whisper_ident26 show asks --z 4.0 > RUN.txt        # a candidate, installed in this process only
    python -m bench.whisper_ident26 show asks --z-new 5.5 > RUN.txt    # asks-own-z: today's prompts at the conf's z
    python -m bench.whisper_ident26 show asks --z 4.5 --batch 17       # rule 4's run: batch 17 dev alone
    python -m bench.whisper_ident26 prompts asks                       # how many dev 1-16 prompts each rule measures
    python -m bench.whisper_identity choose BASE.txt RUN.txt ...       # the setting left out by batch and by store

Today (`whisper.conventions.standout_prompt`) the identity set is loaded when the prompt is about the user or a task
a convention could govern, and its standouts are measured on that task or on a first-person prompt off the identity
route that asks something. The candidates change only which prompts qualify, and the standard score `standout_z`:

- today: as shipped (the control, at any z).
- asks: also any prompt that asks something, read from what whisper already parses (`whisper.asked.asks_anything`:
  a question, a request or task, a question by word order or an indirect one, in the prompt or any sentence or
  clause); a remark or chit-chat that asks nothing is left out. The identity set is loaded for those prompts too.
- asks-own-z: asks, with the prompts today's rule measures kept at today's z (4.5) and only the prompts asks adds
  held to a higher one (`--z-new`).
- any: every prompt written in words that is no follow-up (the control of how much the asking test holds back).

Nothing here edits a file: the variant replaces `whisper.conventions.standout_prompt`, the identity set's loading
test in `whisper.stages.retrieve` and the conf's `standout_z`, in this process only. Whisper's CPU per call is
printed to stderr (bench.whisper_ret.count_cpu).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

VARIANTS = ("today", "asks", "any")


def asks_rule(prompt: str) -> bool:
    """The asks candidate's test on a prompt's text: it asks something (`whisper.asked.asks_anything`)."""
    from whisper.asked import asks_anything
    from whisper.conventions import governs_task

    return asks_anything(prompt, task=governs_task)


def qualifies(variant: str, run, today) -> bool:
    """Whether the variant measures standouts on this prompt (`today` is the shipped test)."""
    if variant == "today":
        return today(run)
    if variant == "asks":
        return today(run) or asks_rule(run.prompt)
    return True


def z_for(run, today, conf_z: float, z: float | None, z_new: float | None) -> float:
    """The standard score a prompt's standouts need: z_new on a prompt today's rule does not measure (when given),
    else z (when given), else the conf's."""
    if z_new is not None and not today(run):
        return z_new
    return conf_z if z is None else z


def install(variant: str, z: float | None, z_new: float | None = None) -> None:
    """Put the variant in place of today's rule, and `standout_z` at z (None: the conf's), in this process; with
    z_new, the prompts only the variant measures (not today's rule) need z_new instead (candidate asks-own-z)."""
    import whisper.conventions as conventions
    import whisper.stages.retrieve as retrieve

    today_rule, today_loads, real_standouts = conventions.standout_prompt, retrieve.governs_task, retrieve.standouts

    def standout_prompt(run):
        return qualifies(variant, run, today_rule)

    def loads_identity(prompt: str) -> bool:  # read in retrieve only as `run.about_user or governs_task(prompt)`
        if variant == "today":
            return today_loads(prompt)
        return today_loads(prompt) or variant == "any" or asks_rule(prompt)

    def standouts(run, deps, identity_hits, conf):
        conf = dataclasses.replace(conf, standout_z=z_for(run, today_rule, conf.standout_z, z, z_new))
        return real_standouts(run, deps, identity_hits, conf)

    conventions.standout_prompt = standout_prompt
    retrieve.governs_task = loads_identity
    retrieve.standouts = standouts
    if z is not None:  # standout_gate records the threshold from the run's conf
        real_gate = conventions.standout_gate

        def standout_gate(run, conf):
            return real_gate(run, dataclasses.replace(conf, standout_z=z))

        conventions.standout_gate = standout_gate
        import whisper.stages.gate as gate

        if getattr(gate, "standout_gate", None) is real_gate:
            gate.standout_gate = standout_gate


def measured_prompts(variant: str) -> list[str]:
    """How many dev prompts (the batches not held out) each rule would measure, by prompt text alone: the asking
    test and today's task test (the first-person part needs a run, so it is not counted here)."""
    from bench.whisper_identity import _dev_prompts, dev_label
    from whisper.conventions import governs_task

    prompts = _dev_prompts()
    task = sum(governs_task(p["prompt"]) for p in prompts)
    asking = sum(governs_task(p["prompt"]) or asks_rule(p["prompt"]) for p in prompts)
    return [f"{dev_label()}: {len(prompts)} prompts; a task (today's test by text): {task}; "
            f"a task or asking something (asks): {asking}; any: {len(prompts)} (variant read: {variant})"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("show", "prompts"))
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("--z", type=float, help="standout_z for the run (default: the conf's)")
    parser.add_argument("--z-new", type=float, help="standout_z on the prompts only the variant measures")
    parser.add_argument("--batch", type=int, help="show: only this batch")
    args = parser.parse_args(argv)
    if args.what == "prompts":
        print("\n".join(measured_prompts(args.variant)))
        return 0
    from bench.whisper_ret import count_cpu, cpu_line

    install(args.variant, args.z, args.z_new)
    spent = count_cpu()
    from bench.whisper_stores import main as stores_main

    code = stores_main(["--split", "dev", "--show", *(["--batch", str(args.batch)] if args.batch else [])])
    print(cpu_line(spent), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
