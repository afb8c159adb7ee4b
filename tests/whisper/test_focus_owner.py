"""The focus stage's owner agreement (session 27, whose17, whisper.owner): a question naming whose thing it asks
about with a possessive ("Mila's grandmother's birthday", "ter Velde's chamber of commerce number") keeps a memory
only if the memory names that owner; a relation by any word for it, a relative of the user's also as family. Every
note and prompt here was written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.owner import asked_owners, missing_owner
from whisper.stages.focus import focus_check, off_focus
from whisper.state import STAGE_OFF_FOCUS

from .conftest import cand, make_run

MILA = {"title": "Mila's birthday", "content": "Mila's birthday is 4 August. She collects postcards."}


def test_a_birthday_of_the_chain_s_first_owner_does_not_answer_the_last_s(conf):
    note = cand("mila", probability=0.6, **MILA)
    run = make_run("when is Mila's grandmother's birthday?", pool=[note])
    assert focus_check(run, conf, None) == "silent:off_focus"
    assert note.stage == STAGE_OFF_FOCUS


def test_off_focus_names_the_owner_missing():
    assert off_focus("when's mila's gran's birthday", **MILA) == "owner: gran"


@pytest.mark.parametrize(("prompt", "title", "content", "tags", "kept"), [
    # a relation is met by any word for the same person
    ("when is Mila's grandmother's birthday?", "Mila's oma", "Mila's oma turns 80 on 2 May.", (), True),
    ("when is my mum's choir concert?", "Mother sings", "My mother's choir sings on 3 June.", (), True),
    # the user's relative, named by a kin word of the user's side or filed as family
    ("when did my brother's little girl start school?", "Niece Ada", "Ada started school on 1 September.", (), True),
    ("when did my brother's little girl start school?", "Ada at school", "Ada started school on 1 September.",
     ("family",), True),
    ("what was my old landlord's name?", "Moved to Leiden", "Moved to Leiden in May; the movers took a day.", (),
     False),
    # a name must be named (title, text or labels: a project's note may not write its name)
    ("what's ter velde's chamber of commerce number?", "Registration",
     "The club is registered under number 40123456.", (), False),
    ("where is routecraft's database file kept?", "Database file", "The SQLite file lives on a volume at /data.",
     ("routecraft",), True),
])
def test_the_owner_must_be_named(prompt, title, content, tags, kept):
    assert (off_focus(prompt, title=title, content=content, tags=tags) is None) is kept


@pytest.mark.parametrize(("prompt", "owners"), [
    ("when is Mila's grandmother's birthday?", [("relation", "grandmother", False)]),
    ("when did my sister's boy first visit?", [("relation", "sister", True)]),
    ("what's ter velde's chamber of commerce number", [("name", "velde", False)]),
    # a thing's possessive, a time's, a contraction: no owner
    ("what's the club's bank account?", []),
    ("who picked december's novel?", []),
    ("how is the bread app's data copied?", []),
    ("what's today's plan?", []),
    # a request names no owner asked about ("book me flights for mila's birthday")
    ("book me flights for mila's birthday in june", []),
])
def test_asked_owners(prompt, owners):
    assert asked_owners(prompt) == owners


def test_a_memory_naming_the_owner_is_kept_and_no_owner_asks_nothing():
    assert missing_owner("what's mila's shoe size?", "Mila wears size 38.") is None
    assert missing_owner("what's the shoe size?", "Tom wears size 44.") is None
