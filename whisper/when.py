"""The year a question names and the years a memory is about (issue 11, item 9; session 15).

"What was the contribution back in 2023?" is not answered by the note "From 1 July 2026 the yearly contribution is
108 euros", however close it scores: the note is about 2026 on. Pure functions over text and dates, no store's
words: years 19xx / 20xx, month names, ISO dates, and a closed class of words that make a year a bound ("since",
"until", "from", "before", …) or a range ("2019-2024", "between 2019 and 2024"). docs/whisper.md, stage 12.

Time is counted in months (year * 12 + month - 1). A question names points: a year ("in 2024": its twelve months)
or a month and year ("in March 2025", "2025-03"); a year given as a bound ("since 2023", "before 2024") or a range
asks about a stretch, not a point, and is left alone, as are "last year" and "this year" (no number to compare).
A bound or a range written in ISO form ("since 2023-05", "2011-12" for a season) is a bound or a range too.
A memory is about spans of time:
* an event (one occurrence) about each year or month its text names, each range and bound it states, and the year
  it was created in; one whose text names no year about its creation year and the year before ("yesterday's general
  meeting" logged on 2 January, "last year" written in February); one naming no year with no creation date says
  nothing of when it happened;
* any other memory (a fact, decision, rule) is about time only when it states a bound or a range: then it holds
  within them and at each point it names ("From July 2026 the contribution is 108 euros" holds in 2027, not in
  2023); its creation year does not count (the bound says when it starts). A bare date in a fact may end a state as
  well as start one ("Sold the Golf in March 2025; now the Zoe"), so a fact with no bound or range says nothing of
  when it holds, and no year contradicts it (a note written in 2023 may hold in 2021); but one that labels a thing
  with a year ("the 2026 accounts", "our 2025 budget", a title "Budget 2026": `Dated.labels`, session 16) states
  which one of a yearly thing it is, and is about those years. Known limit: its bounds are
  read as the whole of its time ("I live here since we moved in 2021" asked about 2019), and a date that ends a
  state counts only when written as a bound ("until", "before").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
_MONTH_NUMBER = {**{name: i + 1 for i, name in enumerate(_MONTH_NAMES)},
                 **{name[:3]: i + 1 for i, name in enumerate(_MONTH_NAMES)}, "sept": 9}
_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_YEAR = r"(?:19|20)\d\d"
_DASH = r"\s?[-\u2013\u2014/]\s?"

# A date with a year: ISO ("2025-03-22", "2025-03"), "22 March 2025", "March 22, 2025", "March 2025", or a bare year.
# A year glued to other signs (a version "2024.1", an id "build-2024x", a time "20:25") is no date.
_DATE = re.compile(
    rf"(?<![\w.:/-])(?P<iso>{_YEAR})-(?P<iso_m>0[1-9]|1[0-2])(?:-\d\d)?(?![\w.:-]*\d)"
    rf"|(?<![\w.:/])(?:(?P<month>{_MONTH})\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?(?:of\s+)?)?"
    rf"(?P<year>{_YEAR})(?![\w.:]*\d|[\w%])",
    re.IGNORECASE)
# A range of years: "2019-2024", "2019 to 2024", "between 2019 and 2024", "2024/25".
_RANGE = re.compile(rf"\b(?:between\s+)?(?P<a>{_YEAR})(?:{_DASH}|\s+(?:to|and|until|till|through)\s+)"
                    rf"(?:(?P<b>{_YEAR})|(?P<b2>\d\d))\b(?!-\d)", re.IGNORECASE)
# A year made a bound by the word before it ("since 2023", "from 1 July 2026", "until March 2024", "prior to 2020").
_AFTER = r"(?:since|from|after|starting|as of|beginning|effective|onwards? from)"
_BEFORE = r"(?:until|till|til|before|up to|through|prior to|by|ending|ended in)"
_BOUND = re.compile(rf"\b(?P<word>{_AFTER}|{_BEFORE})\s+(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?)?"
                    rf"(?:(?:{_MONTH})\.?\s+(?:\d{{1,2}}(?:st|nd|rd|th)?,?\s+)?)?(?P<year>{_YEAR})\b", re.IGNORECASE)
# An amount or a count is no year: "2000 euros", "1500 m", "€2025".
_QUANTITY = re.compile(r"\s?(?:%|€|\$|£|eur\b|euros?\b|usd\b|dollars?\b|km\b|m\b|kg\b|mb\b|gb\b|px\b|ms\b|members\b|"
                       r"people\b|users\b|steps\b|calories\b|kcal\b|words\b|lines\b|rows\b|items\b|times\b)",
                       re.IGNORECASE)
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)

FOREVER = 10_000 * 12


def _month_index(year: int, month: int) -> int:
    return year * 12 + month - 1


def _year_span(year: int) -> tuple[int, int]:
    return _month_index(year, 1), _month_index(year, 12)


@dataclass(frozen=True, slots=True)
class Dated:
    """What a text says of time: the points it names (month spans: a year is twelve months, a month one), the
    ranges it states and the bounds ("since 2023" -> open after; "until 2024" -> open before)."""

    points: tuple[tuple[int, int], ...] = ()
    ranges: tuple[tuple[int, int], ...] = ()
    after: tuple[int, ...] = ()
    before: tuple[int, ...] = ()
    labels: tuple[tuple[int, int], ...] = ()  # the points that name which one of a yearly thing it is (`_is_label`)

    @property
    def names_a_year(self) -> bool:
        return bool(self.points or self.ranges or self.after or self.before)


def _quantity_after(text: str, end: int) -> bool:
    return bool(_QUANTITY.match(text, end))


# A year that names which one of a yearly thing is meant (session 16): after a determiner and before a noun ("the 2026
# accounts", "our 2025 budget"), or ending a first line, a note's title ("Budget 2026", "Member count November 2026").
_LABEL_BEFORE = re.compile(r"(?:^|\s)(?:the|our|my|your|their|his|her|its|this|that|[A-Z][\w-]*['\u2019]s)\s+$",
                           re.IGNORECASE)
_LABEL_AFTER = re.compile(r"\s+[A-Za-z][\w-]*")


def _is_label(text: str, start: int, end: int) -> bool:
    """Whether the date at text[start:end] labels a thing rather than dates a happening (`_LABEL_BEFORE`)."""
    if _LABEL_BEFORE.search(text[max(0, start - 40):start]) and _LABEL_AFTER.match(text, end):
        return True
    first_line_end = text.find("\n")
    return 0 <= first_line_end and text[end:first_line_end].strip() == "" and end <= first_line_end


def dated(text: str) -> Dated:
    """The dates a text names ("Took over from Hans on 1 April 2025; receipts from 2019-2024" -> the point April
    2025 and the range 2019-2024). Code (fenced or `inline`) is not read."""
    text = _CODE.sub(" ", text)
    ranges: list[tuple[int, int]] = []
    taken: list[tuple[int, int]] = []
    for m in _RANGE.finditer(text):
        a = int(m.group("a"))
        b = int(m.group("b")) if m.group("b") else a // 100 * 100 + int(m.group("b2"))
        if a <= b <= a + 50 and not _quantity_after(text, m.end()):
            ranges.append((_month_index(a, 1), _month_index(b, 12)))
            taken.append(m.span())
    after: list[int] = []
    before: list[int] = []
    for m in _BOUND.finditer(text):
        if any(s <= m.start("year") < e for s, e in taken) or _quantity_after(text, m.end()):
            continue
        year = int(m.group("year"))
        word = m.group("word").lower()
        if re.fullmatch(_AFTER, word):
            after.append(_month_index(year, 1))
        else:
            before.append(_month_index(year, 12))
        taken.append((m.start("year"), m.end()))
    points: list[tuple[int, int]] = []
    labels: list[tuple[int, int]] = []
    for m in _DATE.finditer(text):
        if m.group("iso"):
            if any(s <= m.start("iso") < e for s, e in taken):
                continue
            month = _month_index(int(m.group("iso")), int(m.group("iso_m")))
            points.append((month, month))
            continue
        if (any(s <= m.start("year") < e for s, e in taken) or _quantity_after(text, m.end())
                or text[max(0, m.start() - 1):m.start()] in ("€", "$", "£")):
            continue
        if m.group("month"):
            month = _month_index(int(m.group("year")), _MONTH_NUMBER[m.group("month").lower()])
            points.append((month, month))
        else:
            points.append(_year_span(int(m.group("year"))))
        if _is_label(text, m.start(), m.end()):
            labels.append(points[-1])
    return Dated(points=tuple(points), ranges=tuple(ranges), after=tuple(after), before=tuple(before),
                 labels=tuple(labels))


def may_name_a_year(text: str) -> bool:
    """Whether a text holds a number that may be a year (19xx / 20xx): a cheap test before reading its dates (it may
    be a port, an error code or a count; `asked_points` reads which it is)."""
    return _ANY_YEAR.search(text) is not None


_ANY_YEAR = re.compile(_YEAR)
# A bare year dates a question only after a preposition of time ("in 2024", "back in 2023", "the ALV of 2024", "for
# 2025") or as a label of a yearly thing ("the 2024 accounts"); a month or a day before it ("March 2025", "1 May
# 2025") and the ISO form date it by themselves. "ticket 2024", "error 2003", "port 2024" name no year.
_TIME_PREPOSITION = re.compile(r"\b(?:in|during|for|of|around|circa|throughout|over|about|across|within|early|late|"
                               r"mid|end of|start of)\s+$", re.IGNORECASE)
# What joins a date to the next one of a list: "2024 or 2025", "2024, 2025", "2024 and 2025", "2024/2025" (review1)
_LIST_JOIN = re.compile(r"\s*(?:,|/|&|\bor\b|\band\b|, and\b|, or\b)\s*", re.IGNORECASE)


def asked_points(sentence: str) -> tuple[tuple[int, int], ...]:
    """The points of time an asking sentence names ("what was the contribution back in 2023" -> 2023's twelve
    months); a bound or a range names none ("what changed since 2023?"), nor a bare number that may be a year but
    stands where no date does ("who owns ticket 2024?": `_TIME_PREPOSITION`)."""
    text = _CODE.sub(" ", sentence)
    points = list(dated(text).points)
    kept_end = -1  # where the last date kept ends: "in 2024 or 2025", "for 2024, 2025" list a second one
    for m in _DATE.finditer(text):
        span = None if m.group("iso") or m.group("month") else _year_span(int(m.group("year")))
        before = text[max(0, m.start() - 20):m.start()]
        listed = kept_end >= 0 and _LIST_JOIN.fullmatch(text[kept_end:m.start()]) is not None
        if (span in points and not _TIME_PREPOSITION.search(before) and not listed
                and not _is_label(text, m.start(), m.end())):
            points.remove(span)  # a bare number where no date stands: no point asked
        else:
            kept_end = m.end()
    return tuple(points)


def spans(text: str, created: datetime | None, *, event: bool) -> tuple[tuple[int, int], ...] | None:
    """The spans of time (first and last month) a memory is about, None when it says nothing of when it holds. An
    event: each point, range and bound it names and its creation year (the year before too when it names no year);
    None when it names no year and has no creation date. Any other memory: its ranges, bounds and points when it
    states a range or a bound, else the years that label a thing in it ("the 2026 accounts"), else None (a bare date
    may end a state as well as start one)."""
    said = dated(text)
    found: list[tuple[int, int]] = [*said.ranges, *((a, FOREVER) for a in said.after),
                                    *((0, b) for b in said.before)]
    if not event:
        if found:
            return (*found, *said.points)
        return said.labels or None
    if created is None:
        return (*found, *said.points) if said.names_a_year else None
    made = _year_span(created.year)
    if not said.names_a_year:
        return ((made[0] - 12, made[1]),)
    return (*found, *said.points, made)


def other_time(asked: tuple[tuple[int, int], ...], text: str, created: datetime | None, *, event: bool) -> str | None:
    """The first point asked (as "2023" or "2025-03") when no span of the memory meets any point asked, None when one
    is met ("in 2024 or 2025" and a note on 2025: half an answer is kept; review1, session 18) or the memory says
    nothing of when it holds ("what did Rabo give us in 2024?" and the event note "Rabo ClubSupport 2025 gave 1,280
    euros in October 2025" -> "2024")."""
    if not asked:
        return None
    held = spans(text, created, event=event)
    if held is None:
        return None
    if any(first <= end and start <= last for first, last in asked for start, end in held):
        return None
    year, month = divmod(asked[0][0], 12)
    return str(year) if asked[0][1] - asked[0][0] == 11 else f"{year}-{month + 1:02d}"
