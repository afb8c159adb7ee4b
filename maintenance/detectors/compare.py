"""What differs between two similar statements, read from a token diff (pure; used by the no-LLM detectors).

The cheap signals of `text` look at each side alone ("numbers differ somewhere"), which cannot tell a changed value
("port 8080" -> "port 9090") from two different things that share a template ("2026-07-24: Sofia clarified …" vs
"2026-03-12: Sofia clarified …", "chatgpt-search(3)" vs "chatgpt-fetch(3)", "Sensor bed-3" vs "Sensor bed-4").
Here the two statements are aligned token by token (difflib's algorithm under a work bound,
maintenance/detectors/bounded_diff.py: past it, `approximate` is set and no automatic merge follows) and the
difference is classified:

* distinct items: the sides are anchored to different dates (a date in the title or opening the content: entries of
  a recurring event), carry different identifiers (a token mixing letters and digits, a `name(3)` page, a number
  after "section", "step", "ticket", …) or titles with different numbers (versions, sections). Neither duplicates
  nor conflicting: both are true.
* a slot: the sides are the same sentence except one short span. A changed number, time or date in that span is a
  supersession; an antonym ("enabled"/"disabled", "like"/"dislike") is a conflict; any other word is a different
  fact of the same template, so never a duplicate.
* swapped words: every change of substance is a span of words replaced in place by other words, nothing moved
  ("lentil soup, 200 g lentils" vs "pea soup, 200 g peas"): the same template holding other values, never a copy.
  Forms of one word ("encrypted"/"encryption", "deployed"/"deploy") are not a swap, and an antonym swapped in
  ("trims whitespace" -> "keeps whitespace untouched") marks the sides as opposed.
* a one-sided negation with nothing else of substance changed is a conflict; "X over Y" turned into "Y over X" too.
* a change marker on one side only ("switched to", "no longer", "now", …) says the newer statement replaces the older.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from maintenance.detectors.bounded_diff import diff
from maintenance.detectors.text import NEGATIONS, STOPWORDS

_TOKEN = re.compile(r"\w+(?:[-.:/'’]\w+)*(?:\(\d+\w*\))?")
_ISO_DATE = re.compile(r"^\d{4}-\d{2}(?:-\d{2})?$|^\d{4}-w\d{1,2}$")
_NUMBER = re.compile(r"^\d+(?:[.,:]\d+)*$")
_HAS_DIGIT = re.compile(r"\d")
_HAS_ALPHA = re.compile(r"[^\W\d_]")
MONTHS = frozenset("january february march april may june july august september october november december "
                   "jan feb mar apr jun jul aug sep sept oct nov dec".split())
WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
NUMBER_WORDS = frozenset("zero one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty "
                         "forty fifty sixty hundred thousand once twice half".split())
# A number after one of these names a thing (section 4, ticket 231), it does not measure anything.
ID_WORDS = frozenset("section sections chapter step part figure fig table exercise lecture ticket invoice pr issue "
                     "rfc adr okr job story appendix room bed sprint page item rule article no lesson week episode "
                     "task bug build run release".split())
CHANGE_MARKERS = ("no longer", "anymore", "switched", "moved", "migrated",
                  "replaced", "now", "changed", "stopped", "stepped down", "raised to", "lowered to", "increased to",
                  "decreased to", "deprecated", "upgraded", "downgraded", "from now on", "these days", "not anymore")
# Markers that say the stated thing ended ("stopped using port 5433"), not that a value arrived ("port 5433 now"):
# with the same values on both sides, only these still make a supersession (see `restated_values`).
ENDING_MARKERS = ("no longer", "anymore", "stopped", "stepped down", "deprecated", "replaced", "not anymore")
ANTONYMS = frozenset(frozenset(p) for p in (
    ("like", "dislike"), ("likes", "dislikes"), ("like", "hate"), ("likes", "hates"), ("love", "hate"),
    ("loves", "hates"), ("enabled", "disabled"), ("enable", "disable"), ("on", "off"), ("always", "never"),
    ("allowed", "forbidden"), ("allow", "forbid"), ("public", "private"), ("open", "closed"), ("up", "down"),
    ("dark", "light"), ("required", "optional"), ("mandatory", "optional"), ("agreed", "disagreed"),
    ("accept", "reject"), ("accepts", "rejects"), ("include", "exclude"), ("includes", "excludes"),
    ("true", "false"), ("yes", "no"), ("before", "after"), ("more", "less"), ("higher", "lower"),
    ("increase", "decrease"), ("online", "offline"), ("internal", "external"), ("sync", "async"),
    ("synchronous", "asynchronous"), ("open-source", "proprietary"), ("free", "paid"), ("safe", "unsafe"),
    ("trims", "keeps"), ("keep", "drop"), ("keeps", "drops"), ("encrypted", "plaintext"), ("win", "lose"),
    ("pass", "fail"), ("passes", "fails"), ("succeeded", "failed"), ("good", "bad"), ("best", "worst"),
))
_NEGATING_PREFIXES = ("un", "in", "im", "dis", "non", "non-")
COMPARATIVES = frozenset({"over", "than", "rather", "instead"})
SLOT_MAX_TOKENS = 3
# What a word may end in beyond the stem it shares with another form of itself ("encrypt|ed", "encrypt|ion").
# Not -al, -ive, -ly, -er, -or: they make other words of a stem (sign/signal, port/portal, pass/passive, print/
# printer), and a real change read as "no change" could merge two memories that differ.
_SUFFIXES = frozenset({"", "e", "s", "es", "d", "ed", "ing", "ion", "ation", "ment"})
_VARIANT_MIN_STEM = 4
SLOT_MIN_SHARED = 3


_NO_STEM = frozenset("does has was is this its his always perhaps yes series news less unless plus thus bus gas "
                     "always sometimes analysis basis status".split())


def _stem(tok: str) -> str:
    if tok in _NO_STEM or len(tok) <= 3 or not tok.isalpha() or not tok.endswith("s") or tok.endswith("ss"):
        return tok
    return tok[:-1]


@lru_cache(maxsize=8192)
def diff_tokens(text: str) -> tuple[str, ...]:
    """Lowercased tokens that keep dates, versions, times and names like `bed-3` or `printf(3)` whole.

    A plural `s` is dropped; a number after a month joins it ("july-3"); a number after an id word joins it
    ("ticket#231").
    """
    raw = _TOKEN.findall(text.lower().replace("n't", "nt"))
    out: list[str] = []
    for tok in raw:
        tok = _stem(tok.strip("'’"))
        if not tok:
            continue
        if out and _NUMBER.match(tok) and out[-1] in MONTHS:
            out[-1] = f"{out[-1]}-{tok}"
        elif out and _NUMBER.match(tok) and out[-1] in ID_WORDS:
            out[-1] = f"{out[-1]}#{tok}"
        else:
            out.append(tok)
    return tuple(out)


def is_date(tok: str) -> bool:
    return bool(_ISO_DATE.match(tok)) or tok in WEEKDAYS or tok.split("-")[0] in MONTHS and "-" in tok


def is_identifier(tok: str) -> bool:
    """A name with a number in it: `bed-3`, `lh1234`, `chatgpt-search(3)`, `ticket#231` (not a date or a value)."""
    if is_date(tok) or _NUMBER.match(tok):
        return False
    return "#" in tok or bool(_HAS_DIGIT.search(tok) and _HAS_ALPHA.search(tok))


def is_quantity(tok: str) -> bool:
    """A value that can change: a number, time, version or number word (not an identifier)."""
    return bool(_NUMBER.match(tok)) or tok in NUMBER_WORDS


def _substantive(tokens: list[str]) -> list[str]:
    return [t for t in tokens if t not in STOPWORDS and t not in NEGATIONS and t not in {"do", "does", "did", "dont",
                                                                                          "doesnt", "didnt"}]


# Tokens are compared as diff_tokens leaves them (a plural or third-person `s` dropped: "trims" -> "trim").
_ANTONYM_STEMS = ANTONYMS | frozenset(frozenset(_stem(w) for w in pair) for pair in ANTONYMS)


def _antonyms(a: str, b: str) -> bool:
    if frozenset((a, b)) in _ANTONYM_STEMS:
        return True
    short, long_ = sorted((a, b), key=len)
    return any(long_ == p + short for p in _NEGATING_PREFIXES) and len(short) > 3


_PARTNERS: dict[str, set[str]] = {}
for _pair in _ANTONYM_STEMS:
    for _word in _pair:
        _PARTNERS.setdefault(_word, set()).update(_pair - {_word})


def _any_antonyms(old: list[str], new: list[str]) -> bool:
    """any(_antonyms(x, y) for x in old for y in new), in time linear in the spans (they can be thousands long)."""
    new_set = set(new)
    for x in set(old):
        if _PARTNERS.get(x, set()) & new_set:
            return True
        for p in _NEGATING_PREFIXES:
            if len(x) > 3 and p + x in new_set or x.startswith(p) and len(x) - len(p) > 3 and x[len(p):] in new_set:
                return True
    return False


def _variant(a: str, b: str) -> bool:
    """Two forms of one word: the same alphabetic stem of four letters or more, then common suffixes."""
    if a == b:
        return True
    if not (a.isalpha() and b.isalpha()):
        return False
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n >= _VARIANT_MIN_STEM and a[n:] in _SUFFIXES and b[n:] in _SUFFIXES


def _variants(old: list[str], new: list[str]) -> bool:
    """The two spans say the same words in other forms (so a change between them is no change of substance)."""
    return len(old) == len(new) and all(_variant(a, b) for a, b in zip(old, new, strict=True))


def _negated(tokens: list[str]) -> bool:
    return any(t in NEGATIONS or t in {"dont", "doesnt", "didnt", "isnt", "arent", "wasnt", "wont", "cannot",
                                       "cant", "without"} for t in tokens)


def _has_marker(text: str, markers: tuple[str, ...] = CHANGE_MARKERS) -> bool:
    low = f" {' '.join(re.findall(r'[a-z]+', text.lower()))} "
    return any(f" {m} " in low for m in markers)


@dataclass(frozen=True, slots=True)
class Comparison:
    """How two statements differ; `distinct` (a reason) means they are about different things."""

    distinct: str = ""
    slot: tuple[tuple[str, ...], tuple[str, ...]] | None = None
    quantity_change: bool = False
    date_change: bool = False
    antonym: bool = False
    negation_only: bool = False
    negation_differs: bool = False
    reversed_order: bool = False
    change_marker: bool = False
    shared: float = 0.0  # share of the longer side's tokens that the two have in common, in order
    shape: str = ""  # the shared template with changed spans as "…" and digits as "#" (groups proposals)

    replaced: bool = False  # the only change is one short span replaced by a different one
    swapped: bool = False  # every change of substance replaces words in place, nothing moved (see the docstring)
    opposed: bool = False  # a replaced span swaps a word for its antonym
    quantities_differ: bool = False  # the numbers, number words or dates of the two sides are not the same set
    # both sides state the same numbers or dates (some), and neither says a thing ended: a change marker on one
    # side then restates the value ("port 5433 now" / "listens on port 5433"), it does not change it
    restated_values: bool = False
    # the two were too long to diff word by word within the work bound (maintenance/detectors/bounded_diff.py): the
    # alignment is true but may show more change than there is; no automatic merge is made on it
    approximate: bool = False

    @property
    def substitution(self) -> bool:
        """One span of words replaced in an otherwise identical statement: a different fact, never a copy."""
        return self.slot is not None or self.replaced or self.swapped


def _swaps_in_place(real: list[tuple[list[str], list[str]]], *, words_kept: list[str]) -> bool:
    """No swapped word reappears elsewhere on the other side (a move, as paraphrases do), and something is kept."""
    removed = {t for o, _ in real for t in o}
    added = {t for _, n in real for t in n}
    return bool(words_kept) and not (removed & added) and not (removed | added) & set(words_kept)


def _anchors(title: str, content_tokens: list[str], title_tokens: list[str]) -> set[str]:
    """Dates that anchor a statement in time: in its title, or among the first three tokens of its content."""
    return {t for t in title_tokens + content_tokens[:3] if is_date(t)}


@lru_cache(maxsize=1024)  # a detector asks twice per pair (distinct_items, then its verdict): one diff, not two
def compare(title_a: str, content_a: str, title_b: str, content_b: str) -> Comparison:
    """Classify the difference between two statements (see the module docstring); the result is frozen."""
    ta_title, tb_title = list(diff_tokens(title_a)), list(diff_tokens(title_b))
    ta_body, tb_body = list(diff_tokens(content_a)), list(diff_tokens(content_b))
    ta, tb = ta_title + ta_body, tb_title + tb_body
    set_a, set_b = set(ta), set(tb)
    distinct = ""
    anchors_a, anchors_b = _anchors(title_a, ta_body, ta_title), _anchors(title_b, tb_body, tb_title)
    if anchors_a and anchors_b and anchors_a != anchors_b:
        distinct = "entries of a recurring event on different dates"
    elif {t for t in set_a - set_b if is_identifier(t)} and {t for t in set_b - set_a if is_identifier(t)}:
        distinct = "different identifiers"
    else:
        nums_a = {t for t in ta_title if is_quantity(t) or is_identifier(t)}
        nums_b = {t for t in tb_title if is_quantity(t) or is_identifier(t)}
        if nums_a and nums_b and nums_a != nums_b:
            distinct = "titles with different numbers (versions or sections)"
    aligned = diff(ta, tb)
    opcodes = aligned.opcodes()
    shared = aligned.matched
    changes = [(ta[i1:i2], tb[j1:j2]) for op, i1, i2, j1, j2 in opcodes if op != "equal"]
    shape_parts: list[str] = []
    for op, i1, i2, _, _ in opcodes:
        if op == "equal":
            shape_parts.extend(re.sub(r"\d", "#", t) for t in ta[i1:i2])
        elif not shape_parts or shape_parts[-1] != "…":
            shape_parts.append("…")
    removed = [t for old, _ in changes for t in old]
    added = [t for _, new in changes for t in new]
    slot = None
    substantive = [(_substantive(old), _substantive(new)) for old, new in changes]
    real = [(o, n) for o, n in substantive if (o or n) and not _variants(o, n)]
    if (len(real) == 1 and real[0][0] and real[0][1] and len(real[0][0]) <= SLOT_MAX_TOKENS
            and len(real[0][1]) <= SLOT_MAX_TOKENS and shared >= SLOT_MIN_SHARED):
        slot = (tuple(real[0][0]), tuple(real[0][1]))
    quantity_change = date_change = antonym = False
    if slot:
        # a value changed when the span holds a number or date and its other words stay the same
        rest_old = {t for t in slot[0] if not (is_quantity(t) or is_date(t))}
        rest_new = {t for t in slot[1] if not (is_quantity(t) or is_date(t))}
        same_frame = rest_old == rest_new
        quantity_change = same_frame and any(is_quantity(t) for t in slot[0] + slot[1])
        date_change = same_frame and any(is_date(t) for t in slot[0] + slot[1])
        antonym = len(slot[0]) == 1 and len(slot[1]) == 1 and _antonyms(slot[0][0], slot[1][0])
    swapped = bool(real) and all(o and n for o, n in real) and _swaps_in_place(real, words_kept=[
        t for i, _, size in aligned.blocks for t in _substantive(ta[i:i + size])])
    opposed = any(_any_antonyms(o, n) for o, n in real)
    negation_only = _negated(ta) != _negated(tb) and not real and shared >= SLOT_MIN_SHARED
    words_a, words_b = _substantive(ta), _substantive(tb)
    reversed_order = (sorted(words_a) == sorted(words_b) and words_a != words_b
                      and bool(COMPARATIVES & set_a & set_b))
    ops = [op for op in opcodes if op[0] != "equal"]
    replaced = (len(ops) == 1 and ops[0][0] == "replace" and shared >= SLOT_MIN_SHARED
                and not all(t in STOPWORDS for t in removed + added) and not _variants(removed, added))
    values_a = {t for t in set_a if is_quantity(t) or is_date(t)}
    values_b = {t for t in set_b if is_quantity(t) or is_date(t)}
    restated = (bool(values_a) and values_a == values_b and not _has_marker(f"{title_a} {content_a}", ENDING_MARKERS)
                and not _has_marker(f"{title_b} {content_b}", ENDING_MARKERS))
    return Comparison(
        approximate=not aligned.exact, restated_values=restated, distinct=distinct, replaced=replaced, swapped=swapped, opposed=opposed,
        quantities_differ={t for t in set_a if is_quantity(t) or is_date(t)}
        != {t for t in set_b if is_quantity(t) or is_date(t)}, slot=slot, quantity_change=quantity_change, date_change=date_change, antonym=antonym,
        negation_only=negation_only, negation_differs=_negated(ta) != _negated(tb), reversed_order=reversed_order,
        change_marker=_has_marker(f"{title_a} {content_a}") != _has_marker(f"{title_b} {content_b}"),
        shared=shared / max(len(ta), len(tb), 1),
        shape=" ".join(shape_parts)[:120] if removed or added else "",
    )
