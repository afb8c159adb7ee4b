"""Temporal phrases in a query -> a created-date window, and the query without them (pure; reference §1.2).

Day boundaries follow the timezone of the `now` passed in (UTC for the service). Windows are half-open:
`after` is inclusive, `before` exclusive, and `before=None` means "up to now".

Readings (deliberate where the original differs, see docs/benchmarks.md "Recall quality"):

| phrase                                | window                                                  |
|---------------------------------------|---------------------------------------------------------|
| today, this morning/afternoon/evening | midnight today -> now                                   |
| yesterday                             | midnight yesterday -> midnight today (calendar day)     |
| this week / this month                | Monday 00:00 / the 1st 00:00 -> now                     |
| last week                             | Monday of the previous week -> now (both readings)      |
| last month                            | the 1st of the previous month -> now (both readings)    |
| past week / past month                | now - 7 / 30 days -> now                                |
| recently, lately                      | 3 days before the newest memory in scope (or now) -> now |
| last/past N hours/days/weeks/months   | now - N units -> now (days start at midnight)           |
| N days ago                            | that calendar day, widened by one day on each side      |
| N weeks/months ago                    | centred on now - N units, +-3.5 / +-15 days             |
| in/during March [2026], March 2026    | that month (no year: the latest March holding memories) |
| in/during [the] summer [2023]         | that season (Dec-Feb, Mar-May, Jun-Aug, Sep-Nov), same  |
| since March                           | March 1st -> now                                        |
| recent                                | stripped, never selects a window                        |

"Both readings": the previous calendar week (month) and the past 7 (30) days both fall inside the window.
When several phrases match, the narrowest window wins; every matched phrase is stripped.

Recall treats the window as a preference (memories inside it are boosted, none outside is removed); only dates
given explicitly through the API filter. A `probe` (memories in scope) lets a month or season without a year
mean the most recent such period that holds memories, and "recently" count back from the newest memory.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

_DAY = timedelta(days=1)

_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3,
}
_NUM = r"(?P<n>\d{1,4}|a\s+couple\s+of|couple\s+of|a\s+few|few|an?|one|two|three|four|five|six|seven|eight|nine|" \
       r"ten|eleven|twelve)"
_UNIT = r"(?P<unit>hours?|days?|weeks?|months?)"
_LEAD = r"(?:\b(?:in|during|from|over|for|within)\s+(?:the\s+)?)?"
_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]
_MONTH = r"(?P<month>" + "|".join(_MONTHS) + r")"


class Probe(Protocol):
    """What the parser may ask of the memories in scope (the search layer answers with two indexed queries)."""

    def holds(self, after: datetime, before: datetime) -> bool:
        """True when some memory in scope was created in [after, before)."""

    def newest(self) -> datetime | None:
        """The creation time of the newest memory in scope, or None when there is none."""


_PROBE: ContextVar[Probe | None] = ContextVar("temporal_probe", default=None)  # the probe of the parse in progress
YEARS_BACK = 30


@dataclass(frozen=True, slots=True)
class TimeWindow:
    """A created-date window: after inclusive, before exclusive (None: up to now)."""

    after: datetime
    before: datetime | None = None

    def span(self, now: datetime) -> timedelta:
        """How long the window is, an open end counting up to now."""
        return (self.before or now) - self.after


@dataclass(frozen=True, slots=True)
class TemporalParse:
    """The outcome of parsing: the window (None when no phrase selects one), the stripped text, the phrases."""

    window: TimeWindow | None
    text: str
    phrases: tuple[str, ...] = ()


def _midnight(now: datetime) -> datetime:
    return now.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_start(year: int, month: int, now: datetime) -> datetime:
    return _midnight(now).replace(year=year, month=month, day=1)


def _add_months(start: datetime, months: int) -> datetime:
    index = start.year * 12 + start.month - 1 + months
    return start.replace(year=index // 12, month=index % 12 + 1, day=1)


def _number(raw: str) -> int:
    raw = re.sub(r"\s+", " ", raw.lower())
    return int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]


def _unit_delta(unit: str, n: int) -> timedelta:
    unit = unit.lower().rstrip("s")
    return {"hour": timedelta(hours=n), "day": timedelta(days=n), "week": timedelta(weeks=n),
            "month": timedelta(days=30 * n)}[unit]


# ---------------------------------------------------------------------------
# Window builders: (match, now) -> window or None (strip-only)
# ---------------------------------------------------------------------------

def _today(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_midnight(now))


def _yesterday(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_midnight(now) - _DAY, _midnight(now))


def _this_week(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_midnight(now) - now.weekday() * _DAY)


def _last_week(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_midnight(now) - (now.weekday() + 7) * _DAY)


def _this_month(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_month_start(now.year, now.month, now))


def _last_month(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_add_months(_month_start(now.year, now.month, now), -1))


def _past(days: int) -> Callable[[re.Match, datetime], TimeWindow]:
    return lambda m, now: TimeWindow(now - timedelta(days=days))


def _last_n(m: re.Match, now: datetime) -> TimeWindow:
    n, unit = _number(m["n"]), m["unit"].lower().rstrip("s")
    if unit == "day":
        return TimeWindow(_midnight(now) - n * _DAY)
    return TimeWindow(now - _unit_delta(unit, n))


def _ago(m: re.Match, now: datetime) -> TimeWindow:
    n, unit = _number(m["n"]), m["unit"].lower().rstrip("s")
    if unit == "day":
        day = _midnight(now) - n * _DAY
        return TimeWindow(day - _DAY, day + 2 * _DAY)
    if unit == "hour":
        return TimeWindow(now - timedelta(hours=n + 1), now - timedelta(hours=max(n - 1, 0)))
    centre = now - _unit_delta(unit, n)
    half = timedelta(days=3.5) if unit == "week" else timedelta(days=15)
    return TimeWindow(centre - half, centre + half)


def _latest_holding(first_year: int, span: Callable[[int], tuple[datetime, datetime]]) -> tuple[datetime, datetime]:
    """The period of `first_year` or the most recent earlier one that holds memories (first_year's without a probe
    or when none does)."""
    probe = _PROBE.get()
    if probe is not None:
        for year in range(first_year, first_year - YEARS_BACK, -1):
            if probe.holds(*span(year)):
                return span(year)
    return span(first_year)


def _month_of(m: re.Match, now: datetime) -> tuple[datetime, datetime]:
    month = _MONTHS.index(m["month"].lower()) + 1

    def span(year: int) -> tuple[datetime, datetime]:
        start = _month_start(year, month, now)
        return start, _add_months(start, 1)

    if m["year"]:
        return span(int(m["year"]))
    return _latest_holding(now.year if month <= now.month else now.year - 1, span)


_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _in_season(m: re.Match, now: datetime) -> TimeWindow:
    first = _SEASON_START[m["season"].lower()]

    def span(year: int) -> tuple[datetime, datetime]:
        start = _month_start(year, first, now)
        return start, _add_months(start, 3)

    if m["year"]:
        year = int(m["year"])
        return TimeWindow(*span(year - 1 if first == 12 else year))
    latest = now.year if _month_start(now.year, first, now) <= now else now.year - 1
    return TimeWindow(*_latest_holding(latest, span))


def _recently(m: re.Match, now: datetime) -> TimeWindow:
    probe = _PROBE.get()
    newest = probe.newest() if probe is not None else None
    anchor = min(now, newest) if newest is not None else now
    return TimeWindow(anchor - 3 * _DAY)


def _in_month(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(*_month_of(m, now))


def _since_month(m: re.Match, now: datetime) -> TimeWindow:
    return TimeWindow(_month_of(m, now)[0])


def _strip_only(m: re.Match, now: datetime) -> None:
    return None


_YEAR = r"(?:,?\s+(?P<year>(?:19|20)\d\d))"
_RULES: list[tuple[re.Pattern, Callable[[re.Match, datetime], TimeWindow | None]]] = [
    (re.compile(rf"{_LEAD}\b(?:last|past|previous)\s+{_NUM}\s+{_UNIT}\b", re.I), _last_n),
    (re.compile(rf"\b{_NUM}\s+{_UNIT}\s+ago\b", re.I), _ago),
    (re.compile(r"\b(?:earlier\s+)?today\b|\bthis\s+(?:morning|afternoon|evening)\b|\btonight\b", re.I), _today),
    (re.compile(r"\byesterday\b", re.I), _yesterday),
    (re.compile(rf"{_LEAD}\bthis\s+week\b", re.I), _this_week),
    (re.compile(rf"{_LEAD}\blast\s+week\b", re.I), _last_week),
    (re.compile(rf"{_LEAD}\b(?:past|previous)\s+week\b", re.I), _past(7)),
    (re.compile(rf"{_LEAD}\bthis\s+month\b", re.I), _this_month),
    (re.compile(rf"{_LEAD}\blast\s+month\b", re.I), _last_month),
    (re.compile(rf"{_LEAD}\b(?:past|previous)\s+month\b", re.I), _past(30)),
    (re.compile(r"\b(?:recently|lately)\b", re.I), _recently),
    (re.compile(rf"\bsince\s+{_MONTH}\b{_YEAR}?", re.I), _since_month),
    (re.compile(rf"\b(?:in|during)\s+{_MONTH}\b{_YEAR}?", re.I), _in_month),
    (re.compile(rf"\b{_MONTH}{_YEAR}\b", re.I), _in_month),
    (re.compile(rf"\b(?:in|during)\s+(?:the\s+)?(?P<season>spring|summer|autumn|fall|winter)\b{_YEAR}?", re.I),
     _in_season),
    (re.compile(r"\b(?:most\s+)?recent\b", re.I), _strip_only),
]


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    text = re.sub(r"([,;:])(?=[?.!,;:]|$)", "", text)
    return text.strip(" ,;:")


def parse_temporal(text: str, now: datetime, probe: Probe | None = None) -> TemporalParse:
    """Find temporal phrases, pick the narrowest window and strip every phrase from the text."""
    found: list[tuple[int, int, TimeWindow | None]] = []
    token = _PROBE.set(probe)
    try:
        for pattern, build in _RULES:
            for m in pattern.finditer(text):
                found.append((m.start(), m.end(), build(m, now)))
    finally:
        _PROBE.reset(token)
    if not found:
        return TemporalParse(window=None, text=text)
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    kept: list[tuple[int, int, TimeWindow | None]] = []
    for start, end, window in found:
        if kept and start < kept[-1][1]:
            continue
        kept.append((start, end, window))
    windows = [(w.span(now), i, w) for i, (_, _, w) in enumerate(kept) if w is not None]
    window = min(windows, key=lambda t: (t[0], t[1]))[2] if windows else None
    stripped, last = [], 0
    for start, end, _ in kept:
        stripped.append(text[last:start])
        last = end
    stripped.append(text[last:])
    phrases = tuple(text[s:e].strip() for s, e, _ in kept)
    return TemporalParse(window=window, text=_clean(" ".join(stripped)), phrases=phrases)
