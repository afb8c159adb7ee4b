"""The flat whisper text and its token budget."""

from __future__ import annotations

import pytest

from whisper.formatter import MAINTENANCE_LINE, render
from whisper.text import estimate_tokens

from .conftest import cand

INTRO = ("Relevant memories, the top ones in full; use recall_node with an id for more. If one helped or misled you: "
         "submit_feedback(node_id, signal=1 or -1, whisper_log_id=7).")


def items():
    return [
        cand("aaaaaaaa-1", title="Index in SQLite", content="The index lives in SQLite with FTS5.", type="decision"),
        cand("bbbbbbbb-2", title="Port", content="The server listens on 8787."),
        cand("cccccccc-3", title="Token file", content="The token is in a 0600 file."),
    ]


def test_top_two_in_full_the_rest_as_titles():
    rendered = render(items(), budget_tokens=300, whisper_log_id=7)
    assert rendered.text == (
        "# Ormah whispers\n" + INTRO + "\n\n"
        "- **[decision]** Index in SQLite (id: aaaaaaaa)\n"
        "  The index lives in SQLite with FTS5.\n"
        "- **[fact]** Port (id: bbbbbbbb)\n"
        "  The server listens on 8787.\n"
        "- **[fact]** Token file (id: cccccccc)"
    )
    assert rendered.node_ids == ("aaaaaaaa-1", "bbbbbbbb-2", "cccccccc-3")
    assert rendered.estimated_tokens == estimate_tokens(rendered.text)


def test_content_equal_to_the_title_is_not_repeated():
    text = render([cand("aaaaaaaa-1", title="Port 8787", content="Port 8787")], budget_tokens=300).text
    assert text.endswith("- **[fact]** Port 8787 (id: aaaaaaaa)")


def test_content_is_cut_at_600_characters():
    long = " ".join(["word"] * 400)
    text = render([cand("aaaaaaaa-1", title="Long", content=long)], budget_tokens=4000).text
    content_line = text.splitlines()[-1]
    assert len(content_line) == 2 + 600  # indent, then at most 600 characters: cut at a word, "…" included
    assert content_line.endswith("word…")


def test_exploration_items_are_labelled():
    item = cand("dddddddd-4", title="Maybe relevant")
    item.exploration = True
    assert render([item], budget_tokens=300).text.endswith("- **[exploring]** Maybe relevant (id: dddddddd)")


def test_maintenance_line_is_appended_when_due():
    assert render(items(), budget_tokens=300, maintenance_due=True).text.endswith("\n\n" + MAINTENANCE_LINE)


@pytest.mark.parametrize("budget", [60, 80, 100, 120, 150, 200, 300, 1000])
def test_the_budget_is_never_exceeded(budget):
    long = [cand(f"{i}eeeeeee-x", title=f"Memory number {i}", content="lorem ipsum dolor " * 60) for i in range(6)]
    rendered = render(long, budget_tokens=budget, maintenance_due=True, whisper_log_id=123)
    assert estimate_tokens(rendered.text) <= budget
    assert rendered.estimated_tokens <= budget


def test_tight_budget_keeps_titles_before_content():
    titles_only = render(items(), budget_tokens=300, full_items=0)
    rendered = render(items(), budget_tokens=titles_only.estimated_tokens + 2)
    assert rendered.text == titles_only.text
    assert rendered.node_ids == ("aaaaaaaa-1", "bbbbbbbb-2", "cccccccc-3")


def test_a_budget_between_titles_drops_the_last_titles():
    one = render(items()[:1], budget_tokens=300, full_items=0)
    rendered = render(items(), budget_tokens=one.estimated_tokens + 1)
    assert rendered.node_ids == ("aaaaaaaa-1",)


def test_budget_too_small_for_one_title_gives_nothing():
    assert render(items(), budget_tokens=20).text == ""
    assert render(items(), budget_tokens=20).node_ids == ()


def test_no_items_no_text():
    assert render([], budget_tokens=300).text == ""
