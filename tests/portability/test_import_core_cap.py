"""The core cap on import, as at remember: a note with `tier: core`, or an Ormah node file in core, imported into a
full core stays in core and the least important older core memory is demoted. Real files, index and MiniLM.

On the old code an import wrote core memories past the cap and nothing demoted any until the next sleep cycle.
"""

from __future__ import annotations

from memory import runtime
from memory.domain.markdown import render
from memory.domain.node import Node
from memory.models import AuditRow, NodeRow
from memory.services import memory_import
from tests.support.core_cap import T0, full_core, tiers


def demoted() -> list[str]:
    return list(AuditRow.objects.filter(operation="demote").values_list("node_uid", flat=True))


def test_a_core_note_imported_into_a_full_core_stays_and_demotes_the_older_one(mem, settings, tmp_path):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 2}
    older = full_core(2)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "releases.md").write_text("---\ntier: core\n---\n# Releases\n\nRobin decides every billing release.\n")

    report = memory_import(path=notes)

    new = report.imported[0]
    assert NodeRow.objects.get(uid=new).importance < NodeRow.objects.get(uid=older[0]).importance  # 0.33 < 0.4051
    # on the old code: core, core, core (three in a core of two)
    assert tiers(new, *older) == ["core", "working", "core"]
    assert "tier: core" in runtime.store().path_for(new).read_text()
    assert demoted() == [older[0]]


def test_a_core_node_file_imported_into_a_full_core_stays_and_demotes_the_older_one(mem, settings, tmp_path):
    settings.ORMAH = {**settings.ORMAH, "CORE_CAP": 2}
    older = full_core(2)
    # another store's core memory, its importance below every core memory here: kept all the same
    incoming = Node(id="6f1f7c1e-3b7a-4c2e-9d55-0c8f4a2b7e10", type="fact", tier="core", importance=0.2,
                    content="Hotfixes need two approvals", created=T0, updated=T0, last_accessed=T0)
    folder = tmp_path / "other-memory"
    (folder / "nodes").mkdir(parents=True)
    (folder / "nodes" / "fact_6f1f7c1e.md").write_text(render(incoming))

    report = memory_import(path=folder)

    assert report.imported == [incoming.id]
    # on the old code: core, core, core
    assert tiers(incoming.id, *older) == ["core", "working", "core"]
    assert demoted() == [older[0]]
