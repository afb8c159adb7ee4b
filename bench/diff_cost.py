"""The word diff's cost: CPU of `compare`, `word_diff` and `similarity`, before (difflib) and after (bounded_diff).

    python -m bench.diff_cost [--before REV] [--old-max-kb 23]

The "before" code is read from git at REV (the last commit with difflib's SequenceMatcher) and run beside the
current one. Cases: the detectors' labelled pairs (bench/detectors/pairs.txt: every Comparison and every word_diff
compared field by field), long prose (this repository's docs, 5-50 KB, against a copy with one word in 150 changed,
and against another doc), long repetitive text (50 words repeated, the review's case, with a few words changed),
a pair of identical long texts, text drawn at random from the same 50 words (a few words changed, or two such
texts), and the 50 words against 50 others (nothing in common: one replaced span of thousands of words). CPU is time.process_time of this process; the load average is printed. The old
code is run on repetitive text only up to --old-max-kb (the review measured 54.8 s at 49 KB).
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "20cc3f5"


def _old_module(rev: str, path: str, name: str) -> types.ModuleType:
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True, capture_output=True,
                            text=True).stdout
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:{path}"
    sys.modules[name] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own file at a known commit
    return module


def _cpu(fn, *args):
    t0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - t0


def _changed(words: list[str], every: int) -> list[str]:
    return [f"{w}x" if n % every == every // 2 else w for n, w in enumerate(words)]


def _cut(text: str, kb: int) -> str:
    return text[:kb * 1024]


def long_cases(old_max_kb: int) -> list[tuple[str, str, str, bool]]:
    """(name, a, b, run the old code too)."""
    prose = "\n\n".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md")))
    other = "\n\n".join(p.read_text() for p in sorted((ROOT / "docs").glob("*.md"), reverse=True))
    vocab = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau "
             "upsilon phi chi psi omega one two three four five six seven eight nine ten red orange yellow green "
             "blue indigo violet black white grey brown pink cyan magenta olive teal").split()
    assert len(vocab) == 50
    repetitive = " ".join(vocab[n % 50] for n in range(20000))
    disjoint = " ".join(f"{vocab[n % 50]}x" for n in range(20000))
    rng = random.Random(23)
    shuffled = " ".join(rng.choice(vocab) for _ in range(20000))
    shuffled_other = " ".join(rng.choice(vocab) for _ in range(20000))
    cases = []
    for kb in (5, 11, 23, 49):
        p = _cut(prose, kb)
        cases.append((f"prose {kb} KB, 1 word in 150 changed", p, " ".join(_changed(p.split(" "), 150)), True))
        cases.append((f"prose {kb} KB against other prose", p, _cut(other, kb), True))
        r = _cut(repetitive, kb)
        cases.append((f"repetitive {kb} KB, 3 words changed", r, " ".join(_changed(r.split(" "), len(r) // 18)),
                      kb <= old_max_kb))
        cases.append((f"repetitive {kb} KB, identical", r, r, kb <= old_max_kb))
        r = _cut(shuffled, kb)
        cases.append((f"random of 50 words {kb} KB, 3 changed", r, " ".join(_changed(r.split(" "), len(r) // 18)),
                      kb <= old_max_kb))
        cases.append((f"random of 50 words {kb} KB, two texts", r, _cut(shuffled_other, kb), kb <= old_max_kb))
        cases.append((f"50 words against 50 others {kb} KB", _cut(repetitive, kb), _cut(disjoint, kb), kb <= old_max_kb))
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--old-max-kb", type=int, default=23)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    from bench.detectors import load_pairs
    from maintenance.detectors import compare as new_compare
    from maintenance.detectors.bounded_diff import diff
    from ormah_site.ui import diff as new_ui

    old_compare = _old_module(args.before, "maintenance/detectors/compare.py", "_old_compare")
    old_ui = _old_module(args.before, "ormah_site/ui/diff.py", "_old_ui_diff")
    print(f"load {Path('/proc/loadavg').read_text().split()[:3]}, before = {args.before}")

    pairs = load_pairs()
    same_cmp = same_pieces = same_sim = 0
    cpu = {"old": 0.0, "new": 0.0}
    most_work = 0
    for p in pairs:
        sides = (p.a.title, p.a.content, p.b.title, p.b.content)
        old_compare.compare.cache_clear()
        new_compare.compare.cache_clear()
        o, t_old = _cpu(old_compare.compare, *sides)
        n, t_new = _cpu(new_compare.compare, *sides)
        cpu["old"] += t_old
        cpu["new"] += t_new
        fields = [f for f in o.__dataclass_fields__]
        same_cmp += all(getattr(o, f) == getattr(n, f) for f in fields) and not n.approximate
        old_text, new_text = f"{p.a.title}\n{p.a.content}", f"{p.b.title}\n{p.b.content}"
        same_pieces += old_ui.word_diff(old_text, new_text) == [
            old_ui.Piece(x.op, x.text) for x in new_ui.word_diff(old_text, new_text)]
        same_sim += old_ui.similarity(old_text, new_text) == new_ui.similarity(old_text, new_text)
        tokens = (list(new_compare.diff_tokens(p.a.title)) + list(new_compare.diff_tokens(p.a.content)),
                  list(new_compare.diff_tokens(p.b.title)) + list(new_compare.diff_tokens(p.b.content)))
        most_work = max(most_work, diff(*tokens).work)
    print(f"labelled pairs: {len(pairs)}; Comparison identical in every field {same_cmp}, word_diff pieces "
          f"identical {same_pieces}, similarity identical {same_sim}; compare CPU old {cpu['old']:.3f} s, "
          f"new {cpu['new']:.3f} s; most work on one pair {most_work} (budget {diff.__kwdefaults__['budget']})")

    print(f"{'case':44} {'compare old':>12} {'new':>8} {'exact':>6} {'shared old/new':>15} "
          f"{'word_diff old':>14} {'new':>8} {'similarity old':>15} {'new':>8}")
    for name, a, b, run_old in long_cases(args.old_max_kb):
        new_compare.compare.cache_clear()
        n, t_new = _cpu(new_compare.compare, "", a, "", b)
        _, w_new = _cpu(new_ui.word_diff, a, b)
        _, s_new = _cpu(new_ui.similarity, a, b)
        if run_old:
            old_compare.compare.cache_clear()
            o, t_old = _cpu(old_compare.compare, "", a, "", b)
            _, w_old = _cpu(old_ui.word_diff, a, b)
            _, s_old = _cpu(old_ui.similarity, a, b)
            cols = f"{t_old:11.3f}s {t_new:7.3f}s {not n.approximate!s:>6} {o.shared:7.3f}/{n.shared:.3f} " \
                   f"{w_old:13.3f}s {w_new:7.3f}s {s_old:14.3f}s {s_new:7.3f}s"
        else:
            cols = f"{'(not run)':>12} {t_new:7.3f}s {not n.approximate!s:>6} {'-':>7}/{n.shared:.3f} " \
                   f"{'(not run)':>14} {w_new:7.3f}s {'(not run)':>15} {s_new:7.3f}s"
        print(f"{name:44} {cols}", flush=True)
    print(f"load {Path('/proc/loadavg').read_text().split()[:3]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
