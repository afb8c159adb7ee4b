"""A memory file dated in the future by hand (a typo: 2062 for 2026) is indexed as it is, and ranks and decays as
if it were new until that date; the API refuses such a `created` (memory/schemas.py, CLOCK_SKEW), but a hand edit
went unnoticed. `ormah doctor` warns `dated_ahead` and names it (review5, session 21)."""

from __future__ import annotations

from memory import runtime
from memory.services import index_sync
from tests.support.doctor import doctor_checks


def test_doctor_warns_about_a_memory_dated_in_the_future(mem):
    fine, typo = mem("dated today", auto_link=False), mem("the boiler was serviced", auto_link=False)
    assert doctor_checks()["dated_ahead"] == {"check": "dated_ahead", "ok": True, "detail": "none"}
    path = runtime.store().path_for(typo.id)
    text = path.read_text()
    stamp = text.split("created: ", 1)[1].split("\n", 1)[0]
    path.write_text(text.replace(f"created: {stamp}", "created: '2062-03-01T09:00:00Z'"))
    index_sync()

    found = doctor_checks()["dated_ahead"]
    assert found["ok"] is True and found.get("warning") is True
    assert typo.id in found["detail"] and fine.id not in found["detail"] and "2062-03-01" in found["detail"]
