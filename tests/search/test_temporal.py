"""Temporal phrases -> windows, with a frozen now: Friday 2026-11-20 12:00 UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memory.domain.temporal import parse_temporal

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def d(day: int, month: int = 11, year: int = 2026, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=UTC)


@pytest.mark.parametrize(("query", "after", "before", "stripped"), [
    ("what did I decide today?", d(20), None, "what did I decide?"),
    ("what did I decide yesterday?", d(19), d(20), "what did I decide?"),
    ("meetings this week", d(16), None, "meetings"),
    ("was there an incident last week?", d(9), None, "was there an incident?"),
    ("what changed in the past week", d(13, hour=12), None, "what changed"),
    ("invoices this month", d(1), None, "invoices"),
    ("invoices last month", d(1, 10), None, "invoices"),
    ("what did I learn recently about embeddings?", d(17, hour=12), None, "what did I learn about embeddings?"),
    ("lately, the sensors", d(17, hour=12), None, "the sensors"),
    ("what bug did I find 3 days ago?", d(16), d(19), "what bug did I find?"),
    ("a couple of days ago", d(17), d(20), ""),
    ("2 weeks ago", d(3), d(10), ""),                      # centred on 6 Nov 12:00, +-3.5 days
    ("errors over the last 3 days", d(17), None, "errors"),
    ("errors in the past 2 hours", d(20, hour=10), None, "errors"),
    ("what happened in March?", d(1, 3), d(1, 4), "what happened?"),
    ("deadline in December", d(1, 12, 2025), d(1, 1, 2026), "deadline"),
    ("budget May 2026", d(1, 5), d(1, 6), "budget"),
    ("since March 2025", d(1, 3, 2025), None, ""),
])
def test_windows(query, after, before, stripped):
    parsed = parse_temporal(query, NOW)
    assert (parsed.window.after, parsed.window.before, parsed.text) == (after, before, stripped)


@pytest.mark.parametrize(("query", "stripped"), [
    ("recent changes to billing", "changes to billing"),
    ("the most recent deploy", "the deploy"),
])
def test_recent_is_stripped_but_selects_no_window(query, stripped):
    parsed = parse_temporal(query, NOW)
    assert (parsed.window, parsed.text) == (None, stripped)


@pytest.mark.parametrize("query", ["which database do we use?", "may I deploy on Friday?", "the week view", ""])
def test_no_temporal_phrase_leaves_the_query_alone(query):
    assert parse_temporal(query, NOW).window is None
    assert parse_temporal(query, NOW).text == query


def test_the_narrowest_window_wins_and_every_phrase_is_stripped():
    parsed = parse_temporal("this week, and yesterday especially, what broke", NOW)
    assert (parsed.window.after, parsed.window.before) == (d(19), d(20))
    assert parsed.text == "and especially, what broke"
    assert parsed.phrases == ("this week", "yesterday")


def test_day_boundaries_follow_the_timezone_of_now():
    lisbon_evening = datetime(2026, 11, 20, 23, 30, tzinfo=timezone(timedelta(hours=1)))
    window = parse_temporal("yesterday", lisbon_evening).window
    assert (window.after.isoformat(), window.before.isoformat()) == (
        "2026-11-19T00:00:00+01:00", "2026-11-20T00:00:00+01:00")
