"""The core cap at remember and promotion time: a `tier=core` remember into a full core keeps the memory it wrote in
core and demotes the least important older one, and so does a promotion (node_set_tier) of the memory it promoted;
the cycle's own check (core_cap_enforce with nothing kept) is unchanged.

A new memory holds the formula's importance from its creation (no access yet: 0.33-0.48), below a core memory
with edges, so the remember's own cap check used to demote the memory it had just written. Real files and index.
"""

from __future__ import annotations

from datetime import timedelta

from memory import runtime
from memory.domain.enums import Tier
from memory.domain.requests import NodeCreate
from memory.models import AuditRow, NodeRow
from memory.services import core_cap_enforce, node_create, node_set_tier, nodes_create
from tests.support.core_cap import T0, full_core, tiers


def test_a_core_remember_into_a_full_core_keeps_the_new_memory_in_core(mem, settings):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 2}
    older = full_core(2)
    new = node_create(request=NodeCreate(content="Robin decides every billing release", tier="core"),
                      now=T0 + timedelta(hours=1), auto_link=False).node
    assert new.importance < NodeRow.objects.get(uid=older[0]).importance  # 0.33 < 0.4051: the least important
    # the new memory stays (on the old code it was demoted: working, core, core); the oldest of the equal two goes
    assert tiers(new.id, *older) == ["core", "working", "core"]
    assert "tier: core" in runtime.store().path_for(new.id).read_text()
    assert list(AuditRow.objects.filter(operation="demote").values_list("node_uid", flat=True)) == [older[0]]
    # the cycle's check (nothing kept) finds core at the cap and changes nothing
    assert core_cap_enforce(now=T0 + timedelta(hours=2)) == []


def test_a_batch_over_the_cap_stays_until_the_cycles_check(mem, settings):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 2}
    older = full_core(1)
    batch = [r.node.id for r in nodes_create(requests=[
        NodeCreate(content="Releases go out on Thursdays", tier="core"),
        NodeCreate(content="Hotfixes need two approvals", tier="core"),
        NodeCreate(content="The on-call lead signs off releases", tier="core"),
    ], now=T0 + timedelta(hours=1), auto_link=False)]
    # the call demotes only what it did not write; its own three stay, over the cap
    assert tiers(*older, *batch) == ["working", "core", "core", "core"]
    NodeRow.objects.filter(uid=batch[1]).update(importance=0.2)  # as a later scorer run might leave it
    # the cycle's check (importance_scorer's, nothing kept) keeps the cap as before
    assert core_cap_enforce(now=T0 + timedelta(hours=2)) == [batch[1]]
    assert tiers(*batch) == ["core", "working", "core"]


def test_a_promotion_into_a_full_core_keeps_the_promoted_memory_in_core(mem, settings):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 2}
    older = full_core(2)
    promoted = node_create(request=NodeCreate(content="Robin decides every billing release"),
                           now=T0 + timedelta(hours=1), auto_link=False).node
    assert promoted.importance < NodeRow.objects.get(uid=older[0]).importance  # 0.33 < 0.4051: the least important

    node_set_tier(ref=promoted.id, tier=Tier.CORE, now=T0 + timedelta(hours=2))

    # on the old code the cap demoted the memory just promoted: working, core, core
    assert tiers(promoted.id, *older) == ["core", "working", "core"]
    assert "tier: core" in runtime.store().path_for(promoted.id).read_text()
    assert list(AuditRow.objects.filter(operation="demote").values_list("node_uid", flat=True)) == [older[0]]
