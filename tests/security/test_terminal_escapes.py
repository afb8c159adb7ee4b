"""A memory cannot drive the terminal it is recalled in (session 23, review11).

Content may hold control characters (only NUL is refused), and `ormah recall` and `ormah show` printed them raw:
a memory written by a prompt-injected agent, captured from a transcript or synced from another machine could
retitle the window (OSC 0), erase and overwrite lines (CSI), or write the clipboard (OSC 52) when the person looked
at it. The CLI prints every control character but tab and newline as its \\u001b-style escape. A real server.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.served import served_home

HOSTILE = ("Deploy note \x1b]0;PWNED\x07 then \x1b[2K\x1b[1Ahidden \x1b]52;c;ZWNobyBwd25lZA==\x07 "
           "clipboard\r overwritten \x9b31m C1 \x7f end")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_home(tmp_path_factory.mktemp("escapes") / "home") as env:
        yield env


def ormah(env, *args, stdin: str | None = None) -> str:
    done = subprocess.run([sys.executable, "-m", "ormah_site.cli", *args], env=env, input=stdin, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def hostile_id(served):
    return json.loads(ormah(served, "remember", "-", "--json", stdin=HOSTILE))["node"]["id"]


@pytest.mark.parametrize("command", [("recall", "Deploy note clipboard"), ("show", "{id}")])
def test_no_control_character_reaches_the_terminal(served, hostile_id, command):
    out = ormah(served, *(arg.format(id=hostile_id) for arg in command))
    assert "Deploy note" in out
    assert not [c for c in out if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f]
    assert "\\u001b]0;PWNED\\u0007" in out and "\\u009b" in out


def test_json_output_still_holds_the_exact_content(served, hostile_id):
    node = json.loads(ormah(served, "show", hostile_id, "--json"))
    assert (node.get("node") or node)["content"] == HOSTILE
