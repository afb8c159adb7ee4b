"""Versions waiting in memory/conflicts/ are named by `ormah doctor` (review5, session 21): an app write that met a
newer hand edit (the agent got a 409) and a person's edit displaced by a write (`.hand.md`) sat there unseen,
so a person could believe an edit was live that was not."""

from __future__ import annotations

from memory import runtime
from memory.atomic import conflict_copy
from tests.support.doctor import doctor_checks


def test_doctor_names_the_versions_waiting_in_conflicts(mem):
    node = mem("the boiler is serviced in March", auto_link=False)
    assert doctor_checks()["conflict_files"] == {"check": "conflict_files", "ok": True, "detail": "none"}
    store = runtime.store()
    path = store.path_for(node.id)
    app = conflict_copy(store, path, path.read_bytes().replace(b"March", b"April"))
    hand = store.conflicts_dir / f"{path.stem}.20261129T120000000000Z.hand.md"
    hand.write_bytes(path.read_bytes().replace(b"March", b"May"))

    found = doctor_checks()["conflict_files"]
    assert found["ok"] is True and found.get("warning") is True
    assert app.name in found["detail"] and hand.name in found["detail"]
    assert "2 versions" in found["detail"] and "1 of them a file a write displaced" in found["detail"]
