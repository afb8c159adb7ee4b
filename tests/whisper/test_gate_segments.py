"""The prompt's segments and the note's sentences, as bench/whisper_gate_segments.py cuts them for the gate inputs
measured in session 14 (bench/whisper_gate_extras.py SEGMENTS; measured on dev, not kept: docs/benchmarks.md)."""

from __future__ import annotations

from bench.whisper_gate_extras import EXTRAS
from bench.whisper_gate_segments import memory_sentences, prose, question

PASTED = """CI red on windows only:

```
FAILED tests/test_io.py::test_roundtrip_crlf - AssertionError
```
Traceback (most recent call last):
  File "gpxkit/io.py", line 12, in read
ValueError: bad line ending
any idea what's different there? we only see it on windows."""


def test_the_prose_leaves_out_code_blocks_and_pasted_output():
    text = prose(PASTED)
    assert "FAILED" not in text and "Traceback" not in text and "ValueError" not in text and "File" not in text
    assert text == "CI red on windows only:\nany idea what's different there? we only see it on windows."


def test_the_question_is_the_sentences_that_ask():
    assert question(PASTED) == "any idea what's different there?"


def test_without_a_question_mark_the_last_sentence_is_the_ask():
    assert question("The export page is new. Write an end-to-end test for it.") == "Write an end-to-end test for it."


def test_a_notes_sentences_of_three_words_or_more():
    assert memory_sentences("Release process. Tag the commit, then push the tag. CI builds the wheel.") == [
        "Tag the commit, then push the tag.", "CI builds the wheel."]


def test_a_candidate_without_segment_figures_keeps_its_cosine():
    bare, seg = {"cosine": 0.4}, {"cosine": 0.4, "seg": {"q": 0.55, "prose": 0.3, "sent": 0.5, "sent_q": 0.6}}
    assert EXTRAS["all_best"](bare, [bare]) == 0.4
    assert EXTRAS["all_best"](seg, [seg]) == 0.6 and EXTRAS["seg_best"](seg, [seg]) == 0.55
