"""A token diff with a bound on its work (pure; used by the detectors' `compare` and the inbox's word diff).

difflib's SequenceMatcher (autojunk off) is quadratic or worse on long texts whose words repeat: 55 s of CPU for two
49 KB memories of 50 repeated words (review11, docs/security.md). `diff` runs the same algorithm, line for line
(`find_longest_match` and `get_matching_blocks` of CPython 3.11's difflib, with no junk), and counts its work: the
positions of b it looks at. Within `budget` the result is SequenceMatcher's, block for block (`exact` is True).
Past it, the diff starts again the cheap way: the common prefix and suffix are matched, the tokens that occur once
in each remaining middle anchor it (patience diff: the longest run of such tokens in the same order on both sides),
and the gaps between anchors are diffed by the same counted algorithm on what is left of a second budget, or, past
it, by Myers' shortest edit script (its work grows with length times differences: small for a long text with a few
words changed, however repetitive) on a third; a gap past both is reported as replaced whole. The whole run looks
at most 3 x `budget` positions, plus linear passes. That is still a true alignment of the two texts (every block it
reports is equal on both sides), only not always the one SequenceMatcher reports, and it may report more change
than there is, never less; `exact` is False and the duplicate detector takes the safe side (no automatic merge).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

# Positions of b looked at by the longest-match search. The detectors' labelled pairs need at most ~4,000 (bench/
# diff_cost.py); 300,000 is about 0.1 s of CPU, and the fallback spends at most as much again.
BUDGET = 300_000

Block = tuple[int, int, int]
Opcode = tuple[str, int, int, int, int]


class _OverBudget(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Diff:
    """Matching blocks (i, j, size), ending with (len(a), len(b), 0) as difflib's do; `work` = positions looked at."""

    blocks: tuple[Block, ...]
    len_a: int
    len_b: int
    exact: bool
    work: int

    @property
    def matched(self) -> int:
        return sum(size for _, _, size in self.blocks)

    def ratio(self) -> float:
        total = self.len_a + self.len_b
        return 2.0 * self.matched / total if total else 1.0

    def opcodes(self) -> list[Opcode]:
        """difflib's get_opcodes, from these blocks."""
        i = j = 0
        out: list[Opcode] = []
        for ai, bj, size in self.blocks:
            tag = ""
            if i < ai and j < bj:
                tag = "replace"
            elif i < ai:
                tag = "delete"
            elif j < bj:
                tag = "insert"
            if tag:
                out.append((tag, i, ai, j, bj))
            i, j = ai + size, bj + size
            if size:
                out.append(("equal", ai, i, bj, j))
        return out


class _Matcher:
    """SequenceMatcher(None, a, b, autojunk=False)'s matching blocks, counting work against a limit."""

    def __init__(self, a, b, limit: int, blo: int = 0, bhi: int | None = None) -> None:
        self.a, self.b, self.limit, self.work = a, b, limit, 0
        b2j: dict = {}
        for j in range(blo, len(b) if bhi is None else bhi):
            b2j.setdefault(b[j], []).append(j)
        self.b2j = b2j

    def longest(self, alo: int, ahi: int, blo: int, bhi: int) -> Block:
        a, b, b2j = self.a, self.b, self.b2j
        besti, bestj, bestsize = alo, blo, 0
        j2len: dict[int, int] = {}
        nothing: list[int] = []
        for i in range(alo, ahi):
            js = b2j.get(a[i], nothing)
            self.work += bisect_left(js, bhi) if js else 0  # the positions the loop below visits
            if self.work > self.limit:
                raise _OverBudget
            j2lenget = j2len.get
            newj2len = {}
            for j in js:
                if j < blo:
                    continue
                if j >= bhi:
                    break
                k = newj2len[j] = j2lenget(j - 1, 0) + 1
                if k > bestsize:
                    besti, bestj, bestsize = i - k + 1, j - k + 1, k
            j2len = newj2len
        while besti > alo and bestj > blo and a[besti - 1] == b[bestj - 1]:
            besti, bestj, bestsize = besti - 1, bestj - 1, bestsize + 1
        while besti + bestsize < ahi and bestj + bestsize < bhi and a[besti + bestsize] == b[bestj + bestsize]:
            bestsize += 1
        return besti, bestj, bestsize

    def blocks(self, alo: int, ahi: int, blo: int, bhi: int) -> list[Block]:
        """The matching blocks within a[alo:ahi], b[blo:bhi], in order, adjacent ones not yet joined."""
        queue = [(alo, ahi, blo, bhi)]
        found = []
        while queue:
            alo, ahi, blo, bhi = queue.pop()
            i, j, k = x = self.longest(alo, ahi, blo, bhi)
            if k:
                found.append(x)
                if alo < i and blo < j:
                    queue.append((alo, i, blo, j))
                if i + k < ahi and j + k < bhi:
                    queue.append((i + k, ahi, j + k, bhi))
        found.sort()
        return found


def _joined(blocks: list[Block], len_a: int, len_b: int) -> tuple[Block, ...]:
    i1 = j1 = k1 = 0
    out: list[Block] = []
    for i2, j2, k2 in blocks:
        if i1 + k1 == i2 and j1 + k1 == j2:
            k1 += k2
        else:
            if k1:
                out.append((i1, j1, k1))
            i1, j1, k1 = i2, j2, k2
    if k1:
        out.append((i1, j1, k1))
    out.append((len_a, len_b, 0))
    return tuple(out)


def _unique_anchors(a, b, alo: int, ahi: int, blo: int, bhi: int) -> list[tuple[int, int]]:
    """Pairs (i, j) of tokens that occur once in a[alo:ahi] and once in b[blo:bhi], the longest run in order."""
    count_a: dict = {}
    for i in range(alo, ahi):
        count_a[a[i]] = count_a.get(a[i], 0) + 1
    where_b: dict = {}
    for j in range(blo, bhi):
        where_b[b[j]] = -1 if b[j] in where_b else j
    pairs = [(i, where_b[a[i]]) for i in range(alo, ahi)
             if count_a[a[i]] == 1 and where_b.get(a[i], -1) >= 0]
    # the longest increasing run of j (patience sorting), pairs already in order of i
    tails: list[int] = []
    tail_at: list[int] = []
    back: list[int] = []
    for n, (_, j) in enumerate(pairs):
        pos = bisect_left(tails, j)
        if pos == len(tails):
            tails.append(j)
            tail_at.append(n)
        else:
            tails[pos], tail_at[pos] = j, n
        back.append(tail_at[pos - 1] if pos else -1)
    run: list[tuple[int, int]] = []
    n = tail_at[-1] if tail_at else -1
    while n >= 0:
        run.append(pairs[n])
        n = back[n]
    return run[::-1]


def _myers(a, b, alo: int, ahi: int, blo: int, bhi: int, limit: int) -> tuple[list[Block] | None, int]:
    """A shortest edit script's matching blocks (Myers' greedy diff), or None past `limit` steps; and the steps.

    Its work grows with the length times the number of differences: small for long texts that differ little, even
    when their words repeat (where SequenceMatcher is at its worst)."""
    n, m = ahi - alo, bhi - blo
    v = {1: 0}
    trace: list[dict[int, int]] = []
    work = 0
    for d in range(n + m + 1):
        trace.append(dict(v))
        for k in range(-d, d + 1, 2):
            x = v[k + 1] if k == -d or (k != d and v[k - 1] < v[k + 1]) else v[k - 1] + 1
            y = x - k
            start = x
            while x < n and y < m and a[alo + x] == b[blo + y]:
                x, y = x + 1, y + 1
            v[k] = x
            work += 1 + x - start
            if work > limit:
                return None, work
            if x >= n and y >= m:
                return _myers_blocks(trace, d, n, m, alo, blo), work
    return [], work  # not reached: d = n + m always ends


def _myers_blocks(trace: list[dict[int, int]], last: int, x: int, y: int, alo: int, blo: int) -> list[Block]:
    blocks: list[Block] = []
    for d in range(last, 0, -1):
        v, k = trace[d], x - y
        prev_k = k + 1 if k == -d or (k != d and v[k - 1] < v[k + 1]) else k - 1
        prev_x = v[prev_k]
        prev_y = prev_x - prev_k
        mid_x, mid_y = (prev_x, prev_y + 1) if prev_k == k + 1 else (prev_x + 1, prev_y)
        if x > mid_x:
            blocks.append((alo + mid_x, blo + mid_y, x - mid_x))
        x, y = prev_x, prev_y
    if x > 0:
        blocks.append((alo, blo, x))
    return blocks[::-1]


def _cheap(a, b, budget: int) -> tuple[list[Block], int]:
    """A true alignment in bounded work: prefix, suffix, unique anchors, counted diffs of the gaps."""
    la, lb = len(a), len(b)
    pre = 0
    while pre < la and pre < lb and a[pre] == b[pre]:
        pre += 1
    suf = 0
    while suf < la - pre and suf < lb - pre and a[la - 1 - suf] == b[lb - 1 - suf]:
        suf += 1
    blocks: list[Block] = [(0, 0, pre)] if pre else []
    ahi, bhi = la - suf, lb - suf
    anchors = _unique_anchors(a, b, pre, ahi, pre, bhi) + [(ahi, bhi)]
    work = steps = 0  # SequenceMatcher's positions and Myers' steps, each within `budget` over all the gaps
    i0, j0 = pre, pre
    for i, j in anchors:
        if i0 < i and j0 < j:
            matcher = _Matcher(a, b, budget - work, j0, j)
            one_pass = sum(len(matcher.b2j.get(a[n], ())) for n in range(i0, i))
            try:
                if one_pass > budget - work:  # its first search alone would not fit: straight to Myers
                    raise _OverBudget
                blocks += matcher.blocks(i0, i, j0, j)
            except _OverBudget:
                found, spent = _myers(a, b, i0, i, j0, j, budget - steps)
                blocks += found or []  # past both bounds, this gap stays replaced whole
                steps += spent
            work += matcher.work
        if (i, j) != (ahi, bhi):
            blocks.append((i, j, 1))
        i0, j0 = i + 1, j + 1
    if suf:
        blocks.append((ahi, bhi, suf))
    return blocks, work + steps


def diff(a, b, *, budget: int = BUDGET) -> Diff:
    """The matching blocks of two token sequences: SequenceMatcher's within `budget`, else a cheaper true alignment."""
    a, b = list(a), list(b)
    if a == b:  # SequenceMatcher's answer, one block (the common case of a memory saved twice)
        return Diff(_joined([(0, 0, len(a))] if a else [], len(a), len(b)), len(a), len(b), exact=True, work=0)
    matcher = _Matcher(a, b, budget)
    try:
        found = matcher.blocks(0, len(a), 0, len(b))
    except _OverBudget:
        found, work = _cheap(a, b, budget)
        return Diff(_joined(found, len(a), len(b)), len(a), len(b), exact=False, work=matcher.work + work)
    return Diff(_joined(found, len(a), len(b)), len(a), len(b), exact=True, work=matcher.work)
