"""bench.whisper_whose: the owner a question asks about and whether a memory names it, the owners dev prompts name,
the screen of the owner check over a --show run's injected memories, and the expected memories it would drop
(session 27, whose17; not kept in whisper). The notes and prompts of the first tests were written for them, not
taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from bench.whisper_silence import dev_prompts
from bench.whisper_whose import asked_owners, expected, memory_text, missing_owner, owners, read_show, screen


@pytest.mark.parametrize(("prompt", "text", "missing"), [
    # the chain's last owner is the asked one; a relation is met by any word for the same person
    ("when is Mila's grandmother's birthday?", "Mila's birthday\nMila's birthday is 4 August.", "grandmother"),
    ("when's mila's gran's birthday", "Mila's birthday\nMila's birthday is 4 August.", "gran"),
    ("when is Mila's grandmother's birthday?", "Mila's oma\nMila's oma turns 80 on 2 May.", None),
    ("when is my mum's choir concert?", "Mother sings\nMy mother's choir sings on 3 June.", None),
    # the user's relative, named by a kin word of the user's side or filed as family
    ("when did my brother's little girl start school?", "Niece Ada\nAda started school on 1 September.", None),
    ("when did my brother's little girl start school?", "Ada at school\nAda started school.\nfamily", None),
    ("what was my old landlord's name?", "Moved to Leiden\nMoved to Leiden in May; the movers took a day.",
     "landlord"),
    # a name must be named (title, text or labels: a project's note may not write its name)
    ("what's ter velde's chamber of commerce number?", "Registration\nThe club is registered under 40123456.", "velde"),
    ("where is routecraft's database file kept?", "Database file\nThe SQLite file lives at /data.\nroutecraft", None),
    ("what's the shoe size?", "Tom wears size 44.", None),
])
def test_missing_owner(prompt, text, missing):
    assert missing_owner(prompt, text) == missing


@pytest.mark.parametrize(("prompt", "found"), [
    ("when is Mila's grandmother's birthday?", [("relation", "grandmother", False)]),
    ("when did my sister's boy first visit?", [("relation", "sister", True)]),
    ("what's ter velde's chamber of commerce number", [("name", "velde", False)]),
    # a thing's possessive, a time's, a contraction: no owner
    ("what's the club's bank account?", []),
    ("who picked december's novel?", []),
    ("how is the bread app's data copied?", []),
    ("what's today's plan?", []),
    # a request names no owner asked about
    ("book me flights for mila's birthday in june", []),
])
def test_asked_owners(prompt, found):
    assert asked_owners(prompt) == found


def test_the_screen_counts_a_near_miss_silenced_as_made_and_leaves_an_answer(tmp_path):
    prompts = dev_prompts()
    near = next(p for p in prompts.values() if p["prompt"].startswith("when is Jonas's mother's birthday"))
    answer = next(p for p in prompts.values() if p["prompt"].startswith("how's Biscuit's paw"))
    run = tmp_path / "run.txt"
    run.write_text(f"dev {near['id']}  silent injected               ['l011'] expect=[]\n"
                   f"dev {answer['id']}  inject injected               {list(answer['expect'])!r} expect=[]\n"
                   "dev: prompts 2, inject 1\n")
    assert read_show(str(run)) == {near["id"]: ["l011"], answer["id"]: list(answer["expect"])}
    lines = screen(str(run))
    assert lines[0].startswith(f"made   {near['id']} (silent)")
    assert not any(answer["id"] in line for line in lines)
    assert "made 1, broken 0, same 0: net +1" in lines


def test_owners_and_expected_count_the_dev_prompts():
    assert owners()[-1].startswith("35 dev prompts name an owner")
    assert expected()[-1].endswith("expected or accepted memories of dev inject prompts dropped")


def test_the_memory_text_holds_its_labels():
    text = memory_text({"title": "T", "content": "C", "tags": ["docs"], "space": "gpxkit"})
    assert text == "T\nC\ndocs gpxkit"
