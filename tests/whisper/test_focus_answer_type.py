"""The focus stage's answer type on the asked subject (session 27, whisper.answer_type.off_subject): a question asking
a count, number, sum, time or contact keeps a memory only if a sentence of it that names the subject holds one; a note sharing no topic word with the prompt (a paraphrase) only needs to hold one somewhere, as before. Every
note and prompt here was written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper.stages.focus import focus_check, off_focus
from whisper.state import STAGE_OFF_FOCUS

from .conftest import cand, make_run

DOG = {"title": "Our dog", "content": "Our dog sees the vet at the clinic on the corner. He eats 160 grams of kibble a day."}


def test_a_number_of_something_else_does_not_answer(conf):
    note = cand("dog", probability=0.6, **DOG)
    run = make_run("how much does the dog weigh these days?", pool=[note])
    assert focus_check(run, conf, None) == "silent:off_focus"
    assert note.stage == STAGE_OFF_FOCUS


def test_a_number_in_a_sentence_naming_the_subject_is_kept(conf):
    note = cand("weight", probability=0.6, title="Our dog",
                content="Our dog sees the vet at the clinic on the corner. He weighed 14 kilos in May.")
    run = make_run("how much does the dog weigh these days?", pool=[note])
    assert focus_check(run, conf, None) is None
    assert [c.node_id for c in run.pool] == ["weight"]


def test_off_focus_names_the_answer_type():
    assert off_focus("how much does the dog weigh these days?", **DOG) == "answer type: number"


@pytest.mark.parametrize(("prompt", "content", "kept"), [
    ("my aunt's phone number?", "My aunt lives in Amman with her two sons.", False),
    ("my aunt's phone number?", "My aunt in Amman: +962 7 9123 4567.", True),
    ("what's the video link for the board meeting?", "The board meeting is on video every first Monday.", False),
    ("what's the video link for the board meeting?", "Board meeting video: https://meet.example.org/board", True),
])
def test_a_contact_asked_needs_one(prompt, content, kept):
    assert (off_focus(prompt, title="Note", content=content) is None) is kept


def test_a_follow_up_reads_the_subject_from_its_query(conf):
    note = cand("climb", probability=0.6, title="Evenings",
                content="I go bouldering with Bram every Tuesday from 19:30. Climbing shoes are in the hall cupboard.")
    alone = make_run("and when do you two go climbing?", pool=[note])
    assert focus_check(alone, conf, None) == "silent:off_focus"
    note.stage = "candidate"
    joined = make_run("and when do you two go climbing?", pool=[note], follow_up=True,
                      query="who is Bram again? and when do you two go climbing?")
    assert focus_check(joined, conf, None) is None


def test_a_paraphrase_holding_the_kind_anywhere_is_kept():
    note = {"title": "Molar", "content": "Dr. Visser replaced an old filling on 11 April 2025."}
    assert off_focus("when did someone patch up my back teeth?", **note) is None


@pytest.fixture
def board(mem):
    return mem("The board meets on video every first Monday of the month; Wouter chairs the board meeting.",
               title="Board meeting", auto_link=False)


def test_a_note_on_the_meeting_without_its_link_is_not_whispered(board):
    result = whisper_respond(prompt="what's the video link for the board meeting?", session_id="atype")
    assert result.decision == "silent:off_focus"


def test_the_same_note_answers_when_the_board_meets(board):
    result = whisper_respond(prompt="when does the board meeting take place?", session_id="atype")
    assert (result.decision, result.node_ids) == ("injected", (board.id,))
