"""The recall pipeline end to end, through the real services and the real MiniLM embedder."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.domain.enums import EdgeType
from memory.domain.requests import NodePatch
from memory.domain.search import SearchQuery
from memory.models import NodeRow
from memory.search import recall
from memory.services import edge_create, node_update, self_ensure

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def ask(text: str, **fields):
    return recall(query=SearchQuery(query=text, **fields), now=fields.pop("now", NOW))


def ids(hits) -> list[str]:
    return [h.node_id for h in hits]


def distractors(mem) -> None:
    for text in ("The billing service runs PostgreSQL 16 on a managed instance",
                 "Garden sensors report soil moisture every fifteen minutes",
                 "The thesis deadline is 15 February 2027",
                 "Kubernetes nodes are drained one at a time before an upgrade"):
        mem(text, auto_link=False)


def test_paraphrase_is_found_by_vectors(mem):
    distractors(mem)
    target = mem("Prefer guard clauses: return early instead of nesting the happy path in if blocks",
                 type="preference", auto_link=False)
    [top, *_] = ask("should I bail out at the start of a function or wrap everything in conditionals?")
    assert (top.node_id, top.fts_rank, "vector" in top.legs) == (target.id, None, True)


def test_rare_keyword_is_found_by_fts(mem):
    distractors(mem)
    target = mem("Writes failed with SQLITE_BUSY until the busy timeout was raised to 20 seconds", auto_link=False)
    [top, *_] = ask("SQLITE_BUSY")
    assert (top.node_id, top.fts_rank) == (target.id, 1)


def test_first_person_query_finds_the_about_self_memory(mem):
    self_ensure(name="Dana")
    distractors(mem)
    mem("The Lisbon office of the company is in Parque das Nações", auto_link=False)
    home = mem("Lives in Lisbon, in a rented flat in Arroios", about_self=True, auto_link=False)
    [top, *_] = ask("where do I live?")
    assert top.node_id == home.id
    assert "about_self" in top.tags


def test_a_filter_never_starves_the_results(mem):
    for i in range(30):
        mem(f"Deploy note {i}: tag the release, run make deploy and watch the dashboards", space="alpha",
            auto_link=False)
    beta = [mem(f"Deploy note {i}: flash the firmware over the air and check the serial log", space="beta",
                auto_link=False) for i in range(3)]
    hits = ask("how do I deploy with make deploy?", limit=3, spaces=["beta"], min_score=0.0)
    assert sorted(ids(hits)) == sorted(n.id for n in beta)


def test_outdated_memories_are_excluded_unless_history_is_asked_for(mem):
    old = mem("Dana's main code editor is VS Code with the Vim extension", auto_link=False)
    new = mem("Dana's main code editor is Neovim with a Lua config", auto_link=False)
    node_update(ref=old.id, patch=NodePatch(valid_until=NOW - timedelta(days=30)))
    assert old.id not in ids(ask("which code editor does Dana use?", min_score=0.0))
    assert new.id in ids(ask("which code editor does Dana use?", min_score=0.0))
    assert old.id in ids(ask("which code editor did Dana use previously?", min_score=0.0))
    assert old.id in ids(ask("which code editor does Dana use?", min_score=0.0, include_outdated=True))


def test_activation_finds_a_neighbour_that_matches_nothing(mem):
    distractors(mem)
    renderer = mem("Invoice PDFs are rendered with WeasyPrint from an HTML template", title="Invoice PDF rendering",
                   auto_link=False)
    pango = mem("Keep the base image on Debian bookworm so Pango stays at 1.50", auto_link=False)
    edge_create(source_ref=renderer.id, target_ref=pango.id, edge=EdgeType.DEPENDS_ON, weight=0.9)
    assert pango.id not in ids(ask("invoice PDF rendering", activation=False))
    hit = next(h for h in ask("invoice PDF rendering") if h.node_id == pango.id)
    assert (hit.source, hit.legs, hit.activated_by, hit.activation_edge) == (
        "activated", ("activation",), renderer.id, "depends_on")


def test_contradicting_neighbour_is_surfaced_as_conflict(mem):
    distractors(mem)
    rule = mem("Idempotency keys are retained for 24 hours", title="Idempotency key retention", auto_link=False)
    other = mem("Support told a customer that duplicate-charge protection lasts a full week", auto_link=False)
    edge_create(source_ref=other.id, target_ref=rule.id, edge=EdgeType.CONTRADICTS, weight=0.9)
    assert other.id not in ids(ask("idempotency key retention", activation=False))
    hit = next(h for h in ask("idempotency key retention") if h.node_id == other.id)
    assert (hit.source, hit.activated_by, hit.activation_edge) == ("conflict", rule.id, "contradicts")


def test_activation_respects_filters_and_skips_outdated_neighbours(mem):
    renderer = mem("Invoice PDFs are rendered with WeasyPrint from an HTML template", title="Invoice PDF rendering",
                   space="billing", auto_link=False)
    other_space = mem("Keep the base image on Debian bookworm so Pango stays at 1.50", space="infra",
                      auto_link=False)
    stale = mem("The PDF fonts come from the fonts-dejavu package", space="billing", auto_link=False)
    for target in (other_space, stale):
        edge_create(source_ref=renderer.id, target_ref=target.id, edge=EdgeType.DEPENDS_ON, weight=0.9)
    node_update(ref=stale.id, patch=NodePatch(valid_until=NOW - timedelta(days=1)))
    hits = ask("invoice PDF rendering", spaces=["billing"])
    assert ids(hits) == [renderer.id]


def test_yesterday_selects_the_calendar_day_before_now(mem):
    for day, text in ((17, "Decided to pin Go 1.23 for the billing service"),
                      (19, "Decided invoice numbers come from a per-tenant sequence"),
                      (20, "Decided to water the garden only in the morning")):
        mem(text, type="decision", created=datetime(2026, 11, day, 15, tzinfo=UTC), auto_link=False)
    hits = ask("what did I decide yesterday?")
    # The window is a preference since issue 11 (it used to filter): yesterday's decision first, the rest after.
    assert hits[0].created.day == 19 and len(hits) == 3


def test_pure_temporal_query_returns_the_window_newest_first(mem):
    for hour, text in ((9, "Fixed the search debounce bug"), (15, "Replaced the NVMe disk in node 2")):
        mem(text, created=datetime(2026, 11, 19, hour, tzinfo=UTC), auto_link=False)
    mem("Planned the thesis chapter outline", created=datetime(2026, 11, 10, tzinfo=UTC), auto_link=False)
    hits = ask("what happened yesterday?")
    assert [(h.source, h.created.hour) for h in hits] == [("temporal", 15), ("temporal", 9)]


def test_space_scoring_prefers_the_current_project(mem):
    billing = mem("Deploy procedure: tag the release and run make deploy", space="billing", auto_link=False)
    garden = mem("Deploy procedure: tag the release and run make deploy", space="garden", auto_link=False)
    assert ids(ask("deploy procedure", default_space="garden"))[0] == garden.id
    assert ids(ask("deploy procedure", default_space="billing"))[0] == billing.id


def test_recall_never_counts_as_use(mem):
    node = mem("Writes failed with SQLITE_BUSY until the busy timeout was raised", auto_link=False)
    before = NodeRow.objects.values("access_count", "last_accessed", "stability", "last_review").get(uid=node.id)
    assert ids(ask("SQLITE_BUSY")) == [node.id]
    after = NodeRow.objects.values("access_count", "last_accessed", "stability", "last_review").get(uid=node.id)
    assert after == before


def test_hits_are_typed_and_scored_best_first(mem):
    distractors(mem)
    hits = ask("postgres database for billing", min_score=0.0)
    assert hits[0].content == "The billing service runs PostgreSQL 16 on a managed instance"
    assert hits[0].source == "hybrid" and hits[0].raw_cosine is not None
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert len(hits) <= 10


def test_fts_candidates_outside_a_full_vector_pool_get_a_measured_cosine(mem):
    from dataclasses import replace

    from memory.domain.scoring import RecallConf
    from memory.search import recall_scored

    for i in range(5):
        mem(f"Deploy procedure {i}: tag the release, run make deploy, watch the dashboards", auto_link=False)
    pool_of_one = replace(RecallConf(), pool_factor=1)
    mem("Watch the dashboards for a while after lunch", auto_link=False)  # nearer by vector than by keywords
    scored = recall_scored(query=SearchQuery(query="deploy procedure dashboards", limit=3, min_score=0.0),
                           now=NOW, conf=pool_of_one)
    keyword_only = [c for c in scored if c.legs == ("fts",)]
    assert scored and all(c.raw_cosine is not None for c in scored)
    assert all(c.fts_rank is not None and c.vector_rank is None and c.raw_cosine > 0.2 for c in keyword_only)
