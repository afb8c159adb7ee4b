"""Names one whisper module reads from another are public (review of session 13): the closed-class words
(whisper.imperative, read by whisper.conventions through written_in_words) and the gate weights' parser (whisper.conf, read by whisper.checks)."""

from __future__ import annotations

from whisper import checks, conventions
from whisper.conf import GATE_WEIGHTS, parse_gate_weights
from whisper.imperative import CLOSED_CLASS, written_in_words


def test_conventions_reads_the_closed_class_words_of_imperative():
    # Since session 14 through written_in_words, which moved to whisper.imperative beside the closed class.
    assert conventions.written_in_words is written_in_words and "the" in CLOSED_CLASS
    assert not written_in_words("the of and") and written_in_words("the kettle")


def test_checks_reads_the_weights_parser_of_conf():
    assert checks.parse_gate_weights is parse_gate_weights
    assert (parse_gate_weights(None), parse_gate_weights("off")) == (GATE_WEIGHTS, ())
