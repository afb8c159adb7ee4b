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
| recently, lately                      | now - 3 days -> now                                     |
| last/past N hours/days/weeks/months   | now - N units -> now (days start at midnight)           |
| N days ago                            | that calendar day, widened by one day on each side      |
| N weeks/months ago                    | centred on now - N units, +-3.5 / +-15 days             |
| in/during March [2026], March 2026    | that month (the latest March not after now)             |
| since March                           | March 1st -> now                                        |
| recent                                | stripped, never selects a window                        |

"Both readings": the previous calendar week (month) and the past 7 (30) days both fall inside the window.
When several phrases match, the narrowest window wins; every matched phrase is stripped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

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


def _month_of(m: re.Match, now: datetime) -> tuple[datetime, datetime]:
    month = _MONTHS.index(m["month"].lower()) + 1
    year = int(m["year"]) if m["year"] else (now.year if month <= now.month else now.year - 1)
    start = _month_start(year, month, now)
    return start, _add_months(start, 1)


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
    (re.compile(r"\b(?:recently|lately)\b", re.I), _past(3)),
    (re.compile(rf"\bsince\s+{_MONTH}\b{_YEAR}?", re.I), _since_month),
    (re.compile(rf"\b(?:in|during)\s+{_MONTH}\b{_YEAR}?", re.I), _in_month),
    (re.compile(rf"\b{_MONTH}{_YEAR}\b", re.I), _in_month),
    (re.compile(r"\b(?:most\s+)?recent\b", re.I), _strip_only),
]


def _clean(text: str) -> str:
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\s+([?.!,;:])", r"\1", text)
    text = re.sub(r"([,;:])(?=[?.!,;:]|$)", "", text)
    return text.strip(" ,;:")


def parse_temporal(text: str, now: datetime) -> TemporalParse:
    """Find temporal phrases, pick the narrowest window and strip every phrase from the text."""
    found: list[tuple[int, int, TimeWindow | None]] = []
    for pattern, build in _RULES:
        for m in pattern.finditer(text):
            found.append((m.start(), m.end(), build(m, now)))
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
