"""The detectors' and the inbox's word diff: difflib's answer on ordinary pairs, bounded work on long ones (session 23).

review11 measured `compare` at 54.8 s of CPU for two 49 KB memories of 50 repeated words, and the job's time bound
is checked only between pairs. The work is counted here as lines run in maintenance/detectors (sys.settrace), not
timed; the tracer stops a run that goes past the bound, so the old code fails quickly instead of hanging.
"""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from datetime import UTC, datetime
from difflib import SequenceMatcher
from pathlib import Path

import pytest

from maintenance.detectors import compare as cmp_module
from maintenance.detectors.bounded_diff import BUDGET, diff
from maintenance.detectors.compare import compare
from maintenance.detectors.duplicates import differs
from maintenance.detectors.facts import NodeFacts, Pair
from ormah_site.ui.diff import MAX_CHARS, Piece, _tokens, similarity, word_diff

DETECTORS = str(Path(cmp_module.__file__).parent)
VOCAB = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon "
         "phi chi psi omega one two three four five six seven eight nine ten red orange yellow green blue indigo "
         "violet black white grey brown pink cyan magenta olive teal").split()
WORDS = "the a port 8080 9090 of to is not server runs on we use and dark light mode enabled disabled never".split()


class TooMuchWork(Exception):
    pass


def _lines_run(fn, *args, limit: int) -> int:
    """Lines run in maintenance/detectors by fn(*args); past `limit`, TooMuchWork is raised inside the run."""
    count = 0

    def trace(frame, event, arg):
        nonlocal count
        if not frame.f_code.co_filename.startswith(DETECTORS):
            return None
        if event == "line":
            count += 1
            if count > limit:
                raise TooMuchWork(f"more than {limit:,} lines")
        return trace

    sys.settrace(trace)
    try:
        fn(*args)
    finally:
        sys.settrace(None)
    return count


def _cyclic(words: list[str], kb: int) -> str:
    return " ".join(words[n % len(words)] for n in range(kb * 200))[:kb * 1024]


def _difflib_pieces(old: str, new: str) -> list[Piece]:
    """ormah_site/ui/diff.py's word_diff as it was, on difflib (the reference)."""
    a, b = _tokens(old), _tokens(new)
    pieces: list[Piece] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        for op, text in (("same", "".join(a[i1:i2])),) if tag == "equal" else (
                ("removed", "".join(a[i1:i2])), ("added", "".join(b[j1:j2]))):
            if text and pieces and pieces[-1].op == op:
                pieces[-1] = Piece(op, pieces[-1].text + text)
            elif text:
                pieces.append(Piece(op, text))
    return pieces


def _random_pair(rng: random.Random) -> tuple[list[str], list[str]]:
    a = [rng.choice(WORDS) for _ in range(rng.randint(0, 60))]
    b = list(a) if rng.random() < 0.6 else [rng.choice(WORDS) for _ in range(rng.randint(0, 60))]
    for _ in range(rng.randint(0, 5)):
        where = rng.randrange(len(b) + 1)
        b[where:where + rng.randint(0, 2)] = [rng.choice(WORDS) for _ in range(rng.randint(0, 2))]
    return a, b


def test_on_ordinary_pairs_the_diff_is_difflibs_block_for_block():
    rng = random.Random(23)
    for _ in range(2000):
        a, b = _random_pair(rng)
        ours, theirs = diff(a, b), SequenceMatcher(None, a, b, autojunk=False)
        assert ours.exact
        assert ours.blocks == tuple(tuple(m) for m in theirs.get_matching_blocks()), (a, b)
        assert ours.opcodes() == theirs.get_opcodes()
        assert ours.ratio() == theirs.ratio()


def test_on_ordinary_pairs_word_diff_and_similarity_are_difflibs():
    rng = random.Random(24)
    for _ in range(1000):
        a, b = _random_pair(rng)
        old, new = " ".join(a), ", ".join(b)
        assert word_diff(old, new) == _difflib_pieces(old, new)
        a_tokens, b_tokens = _tokens(old), _tokens(new)
        expected = SequenceMatcher(None, a_tokens, b_tokens, autojunk=False).ratio() if a_tokens or b_tokens else 1.0
        assert similarity(old, new) == expected


def test_every_labelled_pair_of_the_detectors_bench_is_diffed_exactly():
    from bench.detectors import load_pairs

    pairs = load_pairs()
    assert len(pairs) > 200
    for p in pairs:
        assert not compare(p.a.title, p.a.content, p.b.title, p.b.content).approximate, p.n


def test_antonyms_across_long_spans_are_found_as_the_pairwise_check_finds_them():
    words = sorted({w for pair in cmp_module.ANTONYMS for w in pair} | {"port", "unsafe", "nonfree", "inclu"})
    words += [p + w for w in words[:20] for p in cmp_module._NEGATING_PREFIXES]
    rng = random.Random(25)
    for _ in range(5000):
        old = [rng.choice(words) for _ in range(rng.randint(0, 4))]
        new = [rng.choice(words) for _ in range(rng.randint(0, 4))]
        pairwise = any(cmp_module._antonyms(x, y) for x in old for y in new)
        assert cmp_module._any_antonyms(old, new) == pairwise, (old, new)


@pytest.mark.parametrize("other", ["disjoint", "changed", "random"])
def test_the_reviews_49_kb_pair_is_compared_in_bounded_work(other):
    a = _cyclic(VOCAB, 49)
    if other == "disjoint":  # nothing in common: one replaced span of thousands of words on each side
        b = _cyclic([f"{w}x" for w in VOCAB], 49)
    elif other == "changed":
        words = a.split(" ")
        b = " ".join(f"{w}x" if n % 2000 == 1000 else w for n, w in enumerate(words))
    else:
        rng = random.Random(26)
        b = " ".join(rng.choice(VOCAB) for _ in range(10000))[:49 * 1024]
    compare.cache_clear()
    # the diff looks at most 3 x BUDGET positions, a few lines each, plus linear passes over 8,000 tokens (measured:
    # 0.4, 1.9 and 4.5 million lines for these three; the old code ran 17 s of CPU on the disjoint pair at 23 KB)
    lines = _lines_run(compare, "", a, "", b, limit=25 * BUDGET)
    assert lines > 0
    compare.cache_clear()


def test_a_long_near_identical_pair_is_aligned_truly_and_never_merged_on_it():
    a = _cyclic(VOCAB, 49)
    words = a.split(" ")
    b = " ".join(f"{w}x" if n == 4000 else w for n, w in enumerate(words))
    found = diff(a.split(" "), b.split(" "))
    assert not found.exact and found.work <= 2 * BUDGET + len(words) * 4
    assert found.matched == len(words) - 1  # every word but the changed one is matched
    for i, j, size in found.blocks:
        assert a.split(" ")[i:i + size] == b.split(" ")[j:j + size]
    cmp = compare("Greek and colours", a, "Greek and colours", b)
    assert cmp.approximate
    t = datetime(2026, 3, 1, tzinfo=UTC)
    node = NodeFacts(row_id=1, uid="a", type="fact", tier="working", space=None, space_locked=False,
                     title="Greek and colours", content=a, tags=(), created=t, updated=t, last_accessed=t,
                     last_review=None, stability=1.0, importance=0.5, access_count=0, is_self=False, embed_hash="",
                     indexed_seq=1)
    other = replace(node, row_id=2, uid="b", content=b, indexed_seq=2)
    assert differs(Pair(node, other, 0.99))  # the safe side: no automatic merge on an approximate diff


def test_two_identical_long_memories_are_still_diffed_exactly():
    a = _cyclic(VOCAB, 49)
    assert not compare("t", a, "t", a).approximate
    assert word_diff(a, a) == [Piece("same", a[:MAX_CHARS])]
