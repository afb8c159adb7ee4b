"""A memory stored without a title is shown by its text's first words everywhere (`ormah show`, `ormah
admin show` and `ormah admin remember`), as `ormah remember`, recall and the MCP tools already showed it; `show` printed
"(untitled)" (session 26's review, left item)."""

from __future__ import annotations

import io

from django.core.management import call_command

from ormah_site.cli import render

_NODE = {"type": "fact", "title": None, "id": "00000001-0000-4000-8000-000000000000", "tier": "working",
         "space": None, "tags": [], "content": "I prefer tabs over spaces in every Python project I keep",
         "connections": [], "created": "2026-11-29T15:20:00+00:00", "valid_until": None}


def test_show_names_an_untitled_memory_by_its_first_words():
    assert render.node_text(_NODE).splitlines()[0] == "[fact] I prefer tabs over spaces in every Python project I keep"


def test_show_cuts_a_long_first_line_at_a_word():
    node = {**_NODE, "content": "The staging database password rotates every ninety days and the new one is with Priya"}
    assert render.node_text(node).splitlines()[0] == "[fact] The staging database password rotates every ninety days and…"


def test_admin_show_names_an_untitled_memory_by_its_first_words(mem):
    node = mem("the boiler is serviced in March by the firm on the corner", auto_link=False)
    out = io.StringIO()
    call_command("show", node.id, stdout=out)
    assert out.getvalue().splitlines()[0] == "[fact] the boiler is serviced in March by the firm on the corner"


def test_admin_remember_names_an_untitled_memory_like_the_cli(db):
    out = io.StringIO()
    call_command("remember", "The allotment's water tap is shut off from November to March, ask the board",
                 stdout=out)
    assert out.getvalue().splitlines()[0] == "Remembered [fact]: The allotment's water tap is shut off from November to…"
