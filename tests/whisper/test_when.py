"""The year a question names and the years a memory is about (whisper.when; session 15). Every prompt and note here
was written for these tests."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from whisper.when import asked_points, dated, names_a_year, other_time

MADE_2026 = datetime(2026, 3, 16, 9, 0, tzinfo=UTC)
MADE_2025 = datetime(2025, 10, 28, 9, 0, tzinfo=UTC)


def months(year: int, first: int = 1, last: int = 12) -> tuple[int, int]:
    return year * 12 + first - 1, year * 12 + last - 1


@pytest.mark.parametrize(("sentence", "points"), [
    ("what was the membership fee back in 2023", (months(2023),)),
    ("who won the league in March 2024?", (months(2024, 3, 3),)),
    ("what happened on 2025-06-14", (months(2025, 6, 6),)),
    ("which exam do I take in the summer of 2027", (months(2027),)),
    ("what changed since 2023?", ()),  # a bound asks about a stretch, not a point
    ("what did we pay before 2020?", ()),
    ("how did fees move between 2019 and 2022?", ()),
    ("what did we get from the sponsor last year", ()),  # no number to compare
    ("did we pass 2000 members?", ()),  # a count, not a year
    ("is it fixed in version 2024.1?", ()),
    ("why does `2023` appear in the log?", ()),  # code is not read
])
def test_the_points_of_time_a_sentence_names(sentence, points):
    assert asked_points(sentence) == points


def test_a_range_and_bounds_in_a_memory():
    said = dated("Kept the receipts from 2019-2024. The new rate applies from 1 July 2026; the old one held until "
                 "2020. Renewed in March 2025, for the 2024/25 season.")
    assert said.ranges == ((months(2019)[0], months(2024)[1]), (months(2024)[0], months(2025)[1]))
    assert said.after == (months(2026)[0],)
    assert said.before == (months(2020)[1],)
    assert said.points == (months(2025, 3, 3),)


@pytest.mark.parametrize(("prompt", "text", "created", "event", "other"), [
    # a standing note holds from the dates it names on: not before them, still after them
    ("what was the membership fee back in 2023", "From 1 July 2026 the yearly fee is 96 euros.", MADE_2026, False,
     "2023"),
    ("what will the membership fee be in 2027", "From 1 July 2026 the yearly fee is 96 euros.", MADE_2026, False,
     None),
    # an event is about the years it names and the year it was written in
    ("how much did the grant give us in 2024", "The town grant 2025 paid 900 euros in October 2025.", MADE_2025, True,
     "2024"),
    ("how much did the grant give us in 2025", "The town grant 2025 paid 900 euros in October 2025.", MADE_2025, True,
     None),
    ("what did the grant pay in March 2026", "The town grant paid 900 euros in October 2025.", MADE_2025, True,
     "2026-03"),
    # a range or a bound it states meets a year inside it
    ("what did the old treasurer file in 2021", "Two boxes of receipts from 2019-2024 came with the handover.",
     MADE_2025, True, None),
    ("what was the rent in 2018", "The rent was 400 euros a month until 2020.", MADE_2025, False, None),
    # a note naming no year says nothing of when it holds, unless it is an event (its creation year)
    ("what was the membership fee back in 2023", "The yearly fee is 96 euros.", MADE_2026, False, None),
    ("what happened at the general meeting in 2023", "The general meeting approved the budget.", MADE_2026, True,
     "2023"),
    # a question naming no point asks nothing of this check
    ("what was the fee last year", "From 1 July 2026 the yearly fee is 96 euros.", MADE_2026, False, None),
])
def test_a_point_asked_and_the_memory_s_time(prompt, text, created, event, other):
    assert other_time(asked_points(prompt), text, created, event=event) == other


@pytest.mark.parametrize(("text", "names"), [
    ("what was the fee back in 2023", True),
    ("what was the fee last year", False),
])
def test_a_cheap_test_for_a_year(text, names):
    assert names_a_year(text) is names
