"""bench.serve_growth's readers of the process's memory (pure plumbing: no server, no store)."""

import argparse

import pytest

from bench import serve_growth
from bench.soak import parse_mix


def test_pymalloc_arenas_hold_the_blocks_in_use():
    held = serve_growth.pymalloc_kib()
    blocks = bytearray(64)  # noqa: F841  (something of Python's own allocator in use)
    assert set(held) == {"arenas", "in_blocks"}
    assert 0 < held["in_blocks"] <= held["arenas"]


def test_heap_and_status_read_this_process():
    heap, status = serve_growth.heap_kib(), serve_growth.status_kib()
    assert 0 < heap["in_use"] <= heap["mapped"]
    assert set(status) == {"VmRSS", "RssAnon", "RssFile", "VmHWM"} and status["RssAnon"] <= status["VmRSS"]


def test_a_mix_names_the_soak_routes_only():
    assert parse_mix("remember=0,recall=43,whisper=43,feedback=14") == (
        ("remember", 0.0), ("recall", 43.0), ("whisper", 43.0), ("feedback", 14.0))
    with pytest.raises(argparse.ArgumentTypeError, match="unknown routes: search"):
        parse_mix("search=1")
