"""Two memories stating the same value are not a supersession because the newer one carries a change word
("... port 5433 now" over "... listens on port 5433"): conflict_detector proposed "a newer memory supersedes an
older one" for them (session 21, review5). A marker that says the thing ended, or a changed value, still is one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maintenance.detectors.conflicts import heuristic_conflict
from maintenance.detectors.facts import NodeFacts, Pair

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def _facts(uid: str, content: str, days: int) -> NodeFacts:
    at = T0 + timedelta(days=days)
    return NodeFacts(row_id=days + 1, uid=uid, type="fact", tier="working", space=None, space_locked=False,
                     title="", content=content, tags=(), created=at, updated=at, last_accessed=at, last_review=None,
                     stability=1.0, importance=0.5, access_count=0, is_self=False, embed_hash="", indexed_seq=0)


def _proposal(older: str, newer: str):
    # a cosine above the heuristic's line: the text alone decides
    return heuristic_conflict(Pair(_facts("a" * 32, older, 0), _facts("b" * 32, newer, 5), cosine=0.8))


@pytest.mark.parametrize(("older", "newer"), [
    ("The staging database listens on port 5433", "Our staging postgres runs on port 5433 now"),
    ("The cache TTL is 300 seconds", "The cache TTL is now 300 seconds"),
])
def test_the_same_value_with_a_change_word_is_no_supersession(older, newer):
    assert _proposal(older, newer) is None


@pytest.mark.parametrize(("older", "newer", "signal"), [
    ("The team uses port 5433 for staging", "The team stopped using port 5433 for staging", "change"),
    ("The staging database listens on port 5433", "The staging database listens on port 5434", "value"),
    ("The payment provider is Stripe", "The payment provider is Adyen now, instead of Stripe", "change"),
])
def test_an_ended_thing_or_a_changed_value_is_still_a_supersession(older, newer, signal):
    proposal = _proposal(older, newer)
    assert proposal is not None
    assert (proposal.payload["edge"], proposal.payload["signals"]) == ("evolved_from", [signal])
