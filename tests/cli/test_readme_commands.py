"""What the README and `make help` tell a new user to type exists: every `ormah COMMAND` it names is a command of
the parser, and every target the Makefile declares has a rule (a phony target without one passes silently)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

from ormah_site.cli.parser import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> set[str]:
    sub = next(a for a in build_parser("0")._actions if a.dest == "command")
    return set(sub.choices)


def test_every_ormah_command_the_readme_names_exists():
    readme = (ROOT / "README.md").read_text()
    named = {m.group(1) for m in re.finditer(r"`(?:\.venv/bin/)?ormah ([a-z][a-z-]*)", readme)}
    assert named, "the README names no command"
    assert named - _commands() == set()


def test_every_declared_make_target_has_a_rule():
    makefile = (ROOT / "Makefile").read_text()
    phony = re.search(r"^\.PHONY: (.+)$", makefile, re.M).group(1).split()
    rules = set(re.findall(r"^([a-z][\w-]*):", makefile, re.M))
    assert set(phony) - rules == set()


def test_make_help_lists_the_two_commands_of_the_readme():
    out = subprocess.run(["make", "-s", "help"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert "make run" in out and "make test" in out and "make lint" in out


def test_every_module_the_makefile_runs_exists():
    makefile = (ROOT / "Makefile").read_text()
    modules = re.findall(r"\$\(PY\) -m ([a-z_][\w.]*)", makefile)
    assert "bench.recall_quality" in modules
    assert [m for m in modules if importlib.util.find_spec(m) is None] == []


def test_every_flag_the_docs_show_after_a_command_is_an_option_of_it():
    """`ormah recall "query" [--limit --full]`: each flag in the same code span as its command exists (README and
    docs/*.md; `ormah admin` passes its flags to Django)."""
    sub = next(a for a in build_parser("0")._actions if a.dest == "command")
    options = {name: {o for a in parser._actions for o in a.option_strings} for name, parser in sub.choices.items()}
    wrong = []
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for command, rest in re.findall(r"`(?:\.venv/bin/)?ormah ([a-z][a-z-]*)([^`]*)`", page.read_text()):
            if command in options and command != "admin":
                wrong += [(page.name, command, flag) for flag in re.findall(r"(--[a-z][a-z-]*)", rest)
                          if flag not in options[command]]
    assert wrong == []
