"""Whisper's recall query (session 26, ret16, issue 11): the texts whisper sends to recall for a prompt, tried as
variants of `whisper.stages.retrieve.further_queries` (the texts searched besides the query, each memory keeping its
better hit), and scored on dev 1-16.

    python -m bench.whisper_ret routes VARIANT --json ROUTES     # bench.whisper_routes --split dev, the variant in
    python -m bench.whisper_ret show VARIANT [--batch N]         # bench.whisper_stores --split dev --show, the same
    python -m bench.whisper_ret net BASE_ROUTES ROUTES           # dev 1-16 fully right made / broken, by batch, store
    python -m bench.whisper_ret right SHOW --batch 17            # a --show run's count of fully right in one batch
    python -m bench.whisper_ret texts VARIANT                    # how many dev 1-16 prompts each variant adds texts to

`routes` and `show` also print whisper's CPU per call (process time of each whisper_respond call, histories
included) to stderr.

A variant replaces `further_queries` in this process only; `base` is today's. The held-out batch
(bench.whisper_gate_fit.FRESH_BATCHES) is left out of `net`, and `right` prints one number, never a prompt. The
variants (docs/benchmarks.md, "Whisper recall query, session 26"):

* `typed`: today's texts read from the prompt as typed (`whisper.pasted.typed_text`: fenced pastes and harness
  elements cut out), and the typed text itself searched too when it differs from the prompt.
* `clause`: today's, and a question about the user written inside context (`whisper.stages.retrieve.user_question`
  returning a clause, not the whole prompt) searched alone too.
* `asking`: today's, and for a prompt that is no follow-up and holds sentences that neither ask nor request, the
  sentences and lines that do (of the typed text, `whisper.asked.sentences`: a question by `whisper.asked.asks`, with
  or without "?", or a request by `whisper.imperative.is_request`), joined, searched too.
* `carry`: today's, and on a follow-up the prompt with the title of the best hit of the previous prompt (searched
  alone, as whisper searched it) in front: the subject a follow-up leans on ("and what does she do for work?" after
  "how old is Karim now?") is named by the memory the previous prompt found, not by the prompt.
* `no-asked`, `no-alone`: today's without one of its two texts (session 14's question after context; a
  follow-up's prompt alone), each a recall fewer where it applied: what each of today's texts is worth now.
* `typed+carry`: both.
* `global`: the per-project pass's twin for a prompt asked outside any project (no space, none named): every recall
  whisper makes for it is also made over the global memories alone (`spaces` [None]), each memory keeping its
  better hit, as `_search` does over the prompt's project and the global memories inside one; imported pages and
  the projects' notes, in their own spaces, no longer crowd a personal prompt's six.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

VARIANTS = ("base", "typed", "clause", "carry", "asking", "typed+carry", "no-asked", "no-alone", "global")
_CAPTURED: dict = {}  # the deps and the first SearchQuery of the current retrieve call (the `carry` variant)


def _typed(run, base):
    from whisper.asked import asked
    from whisper.pasted import typed_text

    typed = typed_text(run.prompt)
    if typed == run.prompt:
        return base(run)
    if run.follow_up and run.query != " ".join(run.prompt.split()):
        return [typed]
    texts = [typed]
    question = asked(typed)
    return texts + ([question] if question is not None else [])


def _clause(run, base):
    from whisper.stages.retrieve import user_question

    texts = base(run)
    clause = user_question(run.prompt)
    if clause is not None and clause.strip() != run.prompt.strip() and clause not in texts:
        texts = texts + [clause]
    return texts


def _carry(run, base):
    texts = base(run)
    if not (run.follow_up and run.recent and _CAPTURED.get("deps")):
        return texts
    deps, query = _CAPTURED["deps"], _CAPTURED["query"]
    before = deps.search(query.model_copy(update={"query": run.recent[-1].prompt}))
    if before:
        texts = texts + [f"{before[0].title} {run.prompt}"]
    return texts


def _asking(run, base):
    from whisper.asked import asks, sentences
    from whisper.imperative import is_request
    from whisper.pasted import typed_text

    texts = base(run)
    if run.follow_up and run.query != " ".join(run.prompt.split()):
        return texts
    parts = sentences(typed_text(run.prompt))
    asking = [part for part in parts if asks(part) or is_request(part)]
    if asking and len(asking) < len(parts):
        text = " ".join(asking)
        if sum(ch.isalpha() for ch in text) >= 8 and text not in texts:
            texts = texts + [text]
    return texts


def _no_asked(run, base):
    """Today's without the question after context searched alone (a follow-up's prompt alone stays)."""
    return base(run) if run.follow_up and run.query != " ".join(run.prompt.split()) else []


def _no_alone(run, base):
    """Today's without a follow-up's prompt searched alone (the question after context stays)."""
    from whisper.asked import asked

    if run.follow_up and run.query != " ".join(run.prompt.split()):
        return []
    question = asked(run.prompt)
    return [question] if question is not None else []


def install(variant: str) -> None:
    """Replace whisper.stages.retrieve.further_queries in this process with the variant's."""
    import whisper.stages.retrieve as retrieve

    base = retrieve.further_queries
    if variant == "base":
        return
    steps = {"typed": _typed, "clause": _clause, "carry": _carry, "asking": _asking, "no-asked": _no_asked,
             "no-alone": _no_alone}
    parts = variant.split("+")

    def further(run):
        texts = None
        for part in parts:
            prev = (lambda r, t=texts: t) if texts is not None else base
            texts = steps[part](run, prev)
        return texts

    real_search = retrieve._search

    def search(query, conf, deps, plain=None):
        if plain is not None:  # the first recall of a retrieve call
            _CAPTURED.update(deps=deps, query=query)
        hits = real_search(query, conf, deps, plain)
        if "global" in parts and query.default_space is None:
            # the per-project pass's twin outside any project: the global memories alone
            more = deps.search(query.model_copy(update={"spaces": [None]}))
            hits = retrieve._better_of(hits, more, query.limit)
        return hits

    if variant != "global":
        retrieve.further_queries = further
    retrieve._search = search


def count_cpu() -> list[float]:
    """Record each whisper_respond call's process CPU time in seconds into the list returned: the benches import
    whisper.services.whisper_respond at each call, so it is wrapped right after their Django setup (importing
    whisper.services before it would fail)."""
    import time

    import bench.whisper_quality as quality
    import bench.whisper_stores as stores

    spent: list[float] = []
    real_setup = quality.setup_django

    def setup_django(*args, **kwargs):
        real_setup(*args, **kwargs)
        import whisper.services as services

        real = services.whisper_respond

        def timed(*a, **kw):
            started = time.process_time()
            try:
                return real(*a, **kw)
            finally:
                spent.append(time.process_time() - started)

        services.whisper_respond = timed

    quality.setup_django = stores.setup_django = setup_django
    return spent


def cpu_line(spent: list[float]) -> str:
    import statistics

    if not spent:
        return "whisper CPU: no calls"
    ordered = sorted(spent)
    return (f"whisper CPU: {len(spent)} calls, mean {1000 * statistics.fmean(spent):.2f} ms, median "
            f"{1000 * statistics.median(spent):.2f} ms, p95 {1000 * ordered[int(0.95 * (len(ordered) - 1))]:.2f} ms "
            f"(process time), load " + " ".join(open("/proc/loadavg").read().split()[:3]))


def _held_out() -> frozenset[int]:
    from bench.whisper_gate_fit import FRESH_BATCHES

    return frozenset(FRESH_BATCHES)


def _fully_right(record: dict) -> bool:
    from bench.whisper_para import fully_right

    return fully_right(record)


def net(base: list[dict], run: list[dict]) -> list[str]:
    """Two routes runs compared prompt by prompt on dev 1-16 (the held-out batch left out)."""
    from bench.prompt_groups import group_of

    prompts = {p["id"]: p for p in json.loads((Path(__file__).parent / "datasets" / "whisper.json").read_text())
               ["prompts"]}
    held = _held_out()
    a = {r["id"]: r for r in base if r["batch"] not in held}
    b = {r["id"]: r for r in run if r["batch"] not in held}
    made, broken, by = [], [], Counter()
    for key in sorted(a.keys() & b.keys()):
        before, after = _fully_right(a[key]), _fully_right(b[key])
        if before == after:
            continue
        (made if after else broken).append(key)
        for group in ("batch", "store"):
            by[group, group_of(prompts[key], group)] += 1 if after else -1
    right = sum(_fully_right(r) for r in a.values())
    lines = [f"dev (held out {sorted(held)} left out): {right} -> {right + len(made) - len(broken)} fully right of "
             f"{len(a)}; made {len(made)} ({', '.join(made)}), broken {len(broken)} ({', '.join(broken)}); net "
             f"{len(made) - len(broken):+d}"]
    for group in ("batch", "store"):
        lines.append(f"by {group}: " + ", ".join(f"{g} {n:+d}" for (k, g), n in sorted(by.items()) if k == group))
    return lines


def right_in_batch(show: Path, batch: int) -> int:
    """How many prompts of one batch a full --show run got fully right (the count only)."""
    from bench.whisper_identity import _right
    from bench.whisper_show_report import read_show

    run = read_show(show)
    prompts = json.loads((Path(__file__).parent / "datasets" / "whisper.json").read_text())["prompts"]
    return sum(bool(_right(p, run)) for p in prompts
               if p.get("batch", 1) == batch and p["split"] == "dev" and p["id"] in run)


def texts(variant: str) -> list[str]:
    """How many dev 1-16 prompts the variant gives texts beyond today's (no recall: the texts only; `carry` needs
    recall and is counted as the follow-ups that have a history)."""
    from whisper.stages import retrieve
    from whisper.state import RecentPrompt, WhisperRequest, WhisperRun
    from whisper.text import looks_like_follow_up

    held = _held_out()
    prompts = json.loads((Path(__file__).parent / "datasets" / "whisper.json").read_text())["prompts"]
    base = retrieve.further_queries
    install(variant)
    counts = Counter()
    for p in prompts:
        if p["split"] != "dev" or p.get("batch", 1) in held:
            continue
        recent = [RecentPrompt(prompt=h, vector=None, at=None) for h in p.get("history", ())] or None
        run = WhisperRun(request=WhisperRequest(prompt=p["prompt"]), now=None, budget_tokens=0, recent=recent)
        run.follow_up = bool(recent) and looks_like_follow_up(p["prompt"])
        run.query = " ".join(([h.prompt for h in recent[-2:]] if run.follow_up else []) + [p["prompt"]])
        run.query = " ".join(run.query.split())
        if "carry" in variant:
            counts[p["category"]] += bool(run.follow_up)
            continue
        counts[p["category"]] += retrieve.further_queries(run) != base(run)
    retrieve.further_queries = base
    return [f"{variant}: {sum(counts.values())} dev prompts get other texts", *(f"  {c} {n}" for c, n in
                                                                              counts.most_common())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("routes", "show", "net", "right", "texts"))
    parser.add_argument("args", nargs="*")
    parser.add_argument("--json", type=Path, help="routes: write every prompt's record here")
    parser.add_argument("--batch", type=int, help="show / right: only this batch")
    args, rest = parser.parse_known_args(argv)
    if args.what in ("routes", "show", "texts"):
        if len(args.args) != 1 or args.args[0] not in VARIANTS:
            parser.error(f"{args.what} needs one VARIANT of {', '.join(VARIANTS)}")
        variant = args.args[0]
        if args.what == "texts":
            import os

            from bench.whisper_quality import setup_django

            import tempfile
            os.environ.setdefault("ORMAH_EMBEDDER", "bench.datasets.embed_cache.CachedEmbedder")
            with tempfile.TemporaryDirectory(prefix="ormah-whisper-ret-") as tmp:
                setup_django(Path(tmp))
                print("\n".join(texts(variant)))
            return 0
        install(variant)
        spent = count_cpu()
        if args.what == "routes":
            from bench.whisper_routes import main as routes_main

            code = routes_main(["--split", "dev", *(["--json", str(args.json)] if args.json else []),
                                *(["--batch", str(args.batch)] if args.batch else [])])
        else:
            from bench.whisper_stores import main as stores_main

            code = stores_main(["--split", "dev", "--show", *(["--batch", str(args.batch)] if args.batch else [])])
        print(cpu_line(spent), file=sys.stderr)
        return code
    if args.what == "net":
        base, run = (json.loads(Path(a).read_text()) for a in args.args)
        print("\n".join(net(base, run)))
        return 0
    if args.batch is None or len(args.args) != 1:
        parser.error("right needs SHOW and --batch N")
    print(right_in_batch(Path(args.args[0]), args.batch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
