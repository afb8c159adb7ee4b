"""A model switch's re-embed interrupted half-way: `ormah doctor` says which memories have no vector yet (semantic
search cannot find them), and `ormah doctor --heal` embeds them."""

import json

import pytest
from django.core.management import call_command

from memory import index, runtime
from memory.index import sync
from memory.models import NodeRow


class Interrupted(Exception):
    pass


def _doctor(capsys, *args) -> dict:
    try:
        call_command("doctor", "--json", *args)
    except SystemExit:
        pass
    out = json.loads(capsys.readouterr().out)
    return {c["check"]: c for c in out["checks"]} | {"ok": out["ok"]}


def test_doctor_names_memories_without_a_vector_and_heal_embeds_them(mem, settings, monkeypatch, capsys):
    for text in ("alpha memory", "beta memory", "gamma memory"):
        mem(text, auto_link=False)
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.HashEmbedder"}
    monkeypatch.setattr(index, "CHUNK", 1)  # one memory per committed batch, so an interruption leaves some behind
    calls = []

    def stop_after_the_first(done, total):  # the re-embed's progress starts again at 0: stop it after one memory
        calls.append(done)
        if 0 in calls and 0 < done < total:
            raise Interrupted

    with pytest.raises(Interrupted):
        sync(runtime.store(), embedder=runtime.embedder(), progress=stop_after_the_first)
    assert NodeRow.objects.filter(embed_hash="").count() == 2

    found = _doctor(capsys)
    assert found["ok"] is False and found["drift"]["ok"]
    assert found["vectors"]["ok"] is False
    assert "2 memories have no vector" in found["vectors"]["detail"]
    assert "--heal" in found["vectors"]["detail"]

    healed = _doctor(capsys, "--heal")
    assert healed["ok"] is True and healed["vectors"]["detail"] == "every memory has one"
    assert not NodeRow.objects.filter(embed_hash="").exists()
