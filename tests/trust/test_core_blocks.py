"""Core blocks: pinned, authority-ranked, read-only memories; tooling never edits a read-only block automatically."""

from __future__ import annotations

from datetime import timedelta

import pytest

from maintenance.runner import job_execute
from memory import runtime
from memory.context.selectors import core_blocks
from memory.domain.requests import NodePatch
from memory.errors import ProtectedNode
from memory.models import NodeRow
from memory.services import automated_writes, core_block_set, core_cap_enforce, edge_create, node_update
from tests.trust.conftest import NOW


@pytest.fixture
def rule(mem):
    node = mem("Never force-push to main", type="procedure", auto_link=False, created=NOW)
    return core_block_set(ref=node.id, pinned=True, authority=90, read_only=True, now=NOW)


def test_core_block_flags_are_written_to_the_file_and_the_index(rule):
    text = runtime.store().path_for(rule.id).read_text()
    assert ("authority: 90\n" in text, "pinned: true\n" in text, "read_only: true\n" in text,
            "tier: core\n" in text) == (True, True, True, True)
    row = NodeRow.objects.get(uid=rule.id)
    assert (row.tier, row.pinned, row.authority, row.read_only) == ("core", True, 90, True)


def test_core_blocks_list_pinned_first_then_by_authority(mem, rule):
    loose = mem("Prefer small pull requests", tier="core", auto_link=False, created=NOW)
    strong = core_block_set(ref=mem("Run the test suite before merging", auto_link=False).id, authority=95)
    assert [r.uid for r in core_blocks(spaces=None, now=NOW + timedelta(days=1))] == [rule.id, strong.id, loose.id]


def test_a_person_may_edit_a_read_only_block(rule):
    edited = node_update(ref=rule.id, patch=NodePatch(content="Never force-push to main or release branches"))
    assert edited.content == "Never force-push to main or release branches"


def test_an_automated_write_to_a_read_only_block_is_refused(rule, mem):
    other = mem("Release branches are cut on Mondays", auto_link=False)
    before = runtime.store().path_for(rule.id).read_bytes()
    with automated_writes("test tool"):
        with pytest.raises(ProtectedNode):
            node_update(ref=rule.id, patch=NodePatch(content="rewritten by a tool"))
        with pytest.raises(ProtectedNode):
            edge_create(source_ref=rule.id, target_ref=other.id)
    with pytest.raises(ProtectedNode):
        node_update(ref=rule.id, patch=NodePatch(tags=["x"]), automated=True)
    assert runtime.store().path_for(rule.id).read_bytes() == before


def test_the_core_cap_never_demotes_pinned_or_read_only_blocks(mem, rule, settings):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 1}
    plain = mem("Deploys are announced in #ops", tier="core", auto_link=False)
    # the remember keeps the memory it wrote in core (tests/memory/test_core_cap.py); the cycle's check does not
    assert NodeRow.objects.get(uid=plain.id).tier == "core"
    assert core_cap_enforce() == [plain.id]
    assert (NodeRow.objects.get(uid=plain.id).tier, NodeRow.objects.get(uid=rule.id).tier) == ("working", "core")


def test_a_maintenance_job_leaves_a_read_only_block_byte_for_byte(mem, rule, settings):
    settings.ORMAH = {**settings.ORMAH, "LLM_PROVIDER": "none"}
    plain = mem("Grafana shows the deploy latency", auto_link=False, created=NOW)
    before = runtime.store().path_for(rule.id).read_bytes()
    outcome = job_execute("importance_scorer", now=NOW + timedelta(days=14))
    assert outcome.status == "ok"
    assert runtime.store().path_for(rule.id).read_bytes() == before
    assert NodeRow.objects.get(uid=plain.id).importance != 0.5
