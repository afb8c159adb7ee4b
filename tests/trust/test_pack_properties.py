"""Properties of context packs: never above the budget, and the same store and query always give the same pack.

The first two run the pure packer over generated candidates; the last one generates whole stores, writes them
through the real services into a fresh home, and builds packs from them with the real recall.
"""

from __future__ import annotations

import random
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.context.pack import context_pack_build
from memory.domain.packing import PackCandidate, PackKind, PackPolicy, estimate_tokens, pack, pack_text
from memory.domain.trust import RecallWarning, RelationKind, VerificationStatus, VerificationWarning, WarningKind
from memory.domain.trust_requests import ContextPackIn, EvidenceIn, RelationIn, SessionStateIn, VerificationIn
from memory.index import remove_nodes
from memory.models import EvidenceRow, NodeRow, SessionStateRow, VerificationRow
from memory.services import (
    core_block_set,
    evidence_record,
    node_create,
    relation_create,
    session_state_set,
    verification_record,
)
from memory.domain.requests import NodeCreate
from tests.trust.conftest import NOW

PURE = settings(max_examples=100, database=None, deadline=None)
STORES = settings(max_examples=6, database=None, deadline=None,
                  suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

WORDS = ["port", "proxy", "deploy", "billing", "postgres", "tuesday", "release", "cache", "the", "shop", "api",
         "token", "ünïcode", "a" * 30, "x", "  ", "9090"]
# Two draws per text (length and seed) keep generation cheap; the words still vary in length and mix.
texts = st.builds(lambda n, seed: " ".join(WORDS[(seed + i * i * 7) % len(WORDS)] for i in range(n)),
                  st.integers(0, 250), st.integers(0, 10_000))
ids = st.uuids().map(str) | st.integers(0, 2**64 - 1).map(lambda n: f"ev_20260701_{n:016x}")


warning_kinds = st.lists(st.sampled_from(list(WarningKind)), max_size=3, unique=True)
check_statuses = st.lists(st.sampled_from(list(VerificationStatus)), max_size=1)
pack_kinds = st.sampled_from(list(PackKind))
scores = st.floats(min_value=-5, max_value=2000, allow_nan=False)
citation_lists = st.lists(ids, max_size=3).map(tuple)
short_texts = texts.map(lambda t: t[:120])
id_lists = st.lists(ids, min_size=0, max_size=15, unique=True)


@st.composite
def candidates(draw):
    out = []
    for item_id in draw(id_lists):
        out.append(PackCandidate(
            kind=draw(pack_kinds), id=item_id, text=draw(texts), score=draw(scores), citations=draw(citation_lists),
            recall_warnings=tuple(RecallWarning(k, item_id, draw(short_texts), None) for k in draw(warning_kinds)),
            verification_warnings=tuple(VerificationWarning(item_id, s, "m", "ci", NOW) for s in draw(check_statuses)),
        ))
    return out


@PURE
@given(candidates(), st.integers(min_value=0, max_value=5000), st.sampled_from(list(PackPolicy)))
def test_a_pack_never_exceeds_its_budget(cands, budget, policy):
    result = pack(cands, budget_tokens=budget, policy=policy)
    assert result.estimated_tokens <= budget
    assert sum(i.tokens for i in result.items) == result.estimated_tokens
    assert estimate_tokens(pack_text(result)) <= result.estimated_tokens


@PURE
@given(candidates(), st.integers(min_value=0, max_value=5000), st.sampled_from(list(PackPolicy)), st.randoms())
def test_the_same_candidates_in_any_order_give_the_same_pack(cands, budget, policy, rnd):
    shuffled = list(cands)
    rnd.shuffle(shuffled)
    assert pack(shuffled, budget_tokens=budget, policy=policy) == pack(cands, budget_tokens=budget, policy=policy)


# ---------------------------------------------------------------------------
# Whole stores through the real services
# ---------------------------------------------------------------------------

FACTS = ["The shop API listens on port 8080", "The shop API listens on port 9090 behind the proxy",
         "Deploys happen on Tuesdays after the release checklist", "Billing runs on PostgreSQL 16",
         "The cache is flushed after every deploy", "Release notes go to the #ops channel",
         "Tokens expire after 24 hours", "The proxy terminates TLS for the shop API"]
QUERIES = ["shop API port", "deploy release", "postgres billing", "proxy tls", "cache"]


@st.composite
def stores(draw):
    chosen = draw(st.lists(st.sampled_from(range(len(FACTS))), min_size=1, max_size=6, unique=True))
    memories = [(FACTS[i], draw(st.sampled_from(["working", "core"])), draw(st.booleans()),
                 draw(st.integers(0, 100)), draw(st.sampled_from(["shop", None]))) for i in chosen]
    relations = draw(st.lists(st.tuples(st.integers(0, len(chosen) - 1), st.integers(0, len(chosen) - 1),
                                        st.sampled_from([RelationKind.SUPERSEDES, RelationKind.CONTRADICTS])),
                              max_size=3))
    checks = draw(st.lists(st.tuples(st.integers(0, len(chosen) - 1),
                                     st.sampled_from(list(VerificationStatus))), max_size=3))
    return {"memories": memories, "relations": relations, "checks": checks,
            "evidence": draw(st.lists(st.sampled_from(FACTS), max_size=3)), "session": draw(st.booleans())}


def _reset(settings_fixture, folder: Path) -> None:
    settings_fixture.ORMAH = {**settings_fixture.ORMAH, "HOME": folder, "MEMORY_DIR": folder / "memory",
                              "TOKEN_FILE": folder / "api_token", "CORE_CAP": 50}
    remove_nodes(list(NodeRow.objects.values_list("uid", flat=True)))
    for model in (EvidenceRow, SessionStateRow, VerificationRow):
        model.objects.all().delete()


def _write(store: dict) -> None:
    uids = []
    for content, tier, pinned, authority, space in store["memories"]:
        node = node_create(request=NodeCreate(content=content, tier=tier, space=space, created=NOW), now=NOW,
                           auto_link=False).node
        if tier == "core":
            core_block_set(ref=node.id, pinned=pinned, authority=authority, now=NOW)
        uids.append(node.id)
    for a, b, kind in store["relations"]:
        if a != b:
            relation_create(request=RelationIn(from_id=uids[a], to_id=uids[b], relation=kind), now=NOW)
    for i, status in store["checks"]:
        verification_record(request=VerificationIn(target_id=uids[i], status=status), now=NOW)
    if store["evidence"]:
        evidence_record(items=[EvidenceIn(kind="user_message", text=t, session_id="s1") for t in store["evidence"]],
                        now=NOW)
    if store["session"]:
        session_state_set(session_id="s1", request=SessionStateIn(current_goal="Ship the proxy"), now=NOW)


@STORES
@given(stores(), st.sampled_from(QUERIES), st.lists(st.integers(0, 1500), min_size=1, max_size=4),
       st.sampled_from(list(PackPolicy)))
def test_across_stores_and_budgets_a_pack_fits_and_is_reproducible(home, db, settings, store, query, budgets,
                                                                     policy):
    _reset(settings, home / f"store-{random.getrandbits(48):012x}")
    _write(store)
    for budget in budgets:
        request = ContextPackIn(query=query, budget_tokens=budget, policy=policy, session_id="s1")
        first = context_pack_build(request=request, now=NOW + timedelta(hours=1))
        assert first.estimated_tokens <= budget
        assert estimate_tokens(pack_text(first)) <= first.estimated_tokens
        assert context_pack_build(request=request, now=NOW + timedelta(hours=1)) == first
