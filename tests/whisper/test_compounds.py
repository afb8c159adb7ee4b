"""A phrasal verb meets the noun written as one word in the overlap filter (whisper.compounds; docs/whisper.md, stage
10). The store and prompts were written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.compounds import compounds
from whisper.models import WhisperCandidateRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.stages import scoring


@pytest.mark.parametrize(("text", "words"), [
    ("is the shop's data backed up anywhere?", {"backup"}),
    ("I was setting up the repo on the new machine", {"setup"}),
    ("we cleaned up the old logs", {"cleanup"}),
    ("set up the project", {"setup"}),
])
def test_a_phrasal_verb_gives_its_compound(text, words):
    assert compounds(text) == words


@pytest.mark.parametrize("text", [
    "look up the user",  # "lookup" is no word of the tokenizer's vocabulary
    "the plane took off",  # an irregular past is not read
    "what is the backup schedule",  # no phrasal verb
])
def test_no_compound(text):
    assert compounds(text) == set()


def stage_of(prompt: str, node_id: str) -> str | None:
    decision = WhisperDecisionRow.objects.filter(prompt=prompt).order_by("-id").first()
    row = WhisperCandidateRow.objects.filter(decision=decision, node_uid=node_id).first()
    return row.stage if row is not None else None


def test_backed_up_meets_a_note_on_backups(mem, monkeypatch):
    note = mem("Litestream streams every write of the shop's SQLite file to an S3 bucket; restores take a minute.",
               type="fact", title="Nightly backups", auto_link=False)
    mem("The shop runs on one Hetzner box behind Caddy.", type="fact", title="Shop hosting", auto_link=False)
    mem("Order data is kept for seven years for the tax office.", type="fact", title="Order retention",
        auto_link=False)
    prompt = "is our data backed up anywhere?"
    monkeypatch.setattr(scoring, "compounds", lambda text: set())  # the filter before: folded words only
    whisper_respond(prompt=prompt, session_id="before")
    assert stage_of(prompt, note.id) == "no_overlap"
    monkeypatch.undo()
    whisper_respond(prompt=prompt, session_id="after")
    assert stage_of(prompt, note.id) not in (None, "no_overlap")
