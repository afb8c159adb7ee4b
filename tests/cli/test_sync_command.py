"""`ormah sync PATH`: the command's output and exit status, and the `ormah` program handing it to Django."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.domain.requests import NodePatch
from memory.services import node_update
from ormah_site.cli import parser as cli_parser
from tests.support import pg_databases


def run(*args) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_the_first_sync_reports_what_went_where(mem, tmp_path):
    mem("The billing service uses PostgreSQL 16 for invoices", auto_link=False)
    out, err = run("sync", str(tmp_path / "checkout"))
    assert out.splitlines()[0] == (f"Synced {tmp_path / 'checkout'}: 1 to the folder, 0 into the store, 0 forgotten, "
                                   "0 removed from the folder, 0 conflicts, 0 in step")
    assert out.splitlines()[1].split()[:2] == ["to", "folder"]
    assert err == ""


def test_a_conflict_is_reported_and_exits_non_zero_after_keeping_both(mem, tmp_path):
    node = mem("The billing service uses PostgreSQL 16 for invoices", auto_link=False)
    root = tmp_path / "checkout"
    run("sync", str(root))
    [path] = (root / "nodes").glob("*.md")
    path.write_bytes(path.read_bytes().replace(b"PostgreSQL 16", b"PostgreSQL 17"))
    node_update(ref=node.id, patch=NodePatch(content="The billing service uses PostgreSQL 18 for invoices"))

    err = io.StringIO()
    with pytest.raises(CommandError) as exc:
        call_command("sync", str(root), stdout=io.StringIO(), stderr=err)

    assert str(exc.value) == "1 conflict needs a look (see above)"
    assert err.getvalue().count("Kept the losing version of a conflict as ") == 2
    assert len(list((root / "conflicts").glob("*.md"))) == 1


def test_a_dry_run_prints_the_plan_as_json_and_writes_nothing(mem, tmp_path):
    mem("The billing service uses PostgreSQL 16 for invoices", auto_link=False)
    root = tmp_path / "checkout"
    out, _ = run("sync", str(root), "--dry-run", "--json")
    report = json.loads(out)
    assert (report["dry_run"], report["counts"]["to_folder"], [c["step"] for c in report["changes"]]) == \
        (True, 1, ["to_folder"])
    assert not root.exists()


def test_a_malformed_file_exits_non_zero_and_names_the_file(mem, tmp_path):
    root = tmp_path / "checkout"
    (root / "nodes").mkdir(parents=True)
    (root / "nodes" / "notes.md").write_text("just a note without front matter\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="1 malformed file needs a look"):
        call_command("sync", str(root), stdout=io.StringIO(), stderr=err)
    assert "Malformed (left untouched): nodes/notes.md: no front matter" in err.getvalue()
    assert (root / "nodes" / "notes.md").read_text() == "just a note without front matter\n"


def test_the_ormah_program_lists_sync_with_help_on_every_option():
    sub = next(a for a in cli_parser.build_parser("0")._actions if hasattr(a, "choices") and a.choices
               and "sync" in a.choices).choices["sync"]
    options = sub.parse_args(["~/team-memories", "--dry-run", "--json"])
    assert (options.path, options.dry_run, options.json) == ("~/team-memories", True, True)


def test_ormah_sync_runs_through_the_ormah_program(tmp_path):
    home, root = tmp_path / "home", tmp_path / "checkout"
    env = {**os.environ, "ORMAH_HOME": str(home), "ORMAH_API_TOKEN": "", "ORMAH_LOG_LEVEL": "WARNING"}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "DJANGO_SETTINGS_MODULE"):
        env.pop(key, None)
    env.update(pg_databases.child_env(home))  # on PostgreSQL: a database of its own; nothing on SQLite

    def ormah(*args):
        return subprocess.run([sys.executable, "-m", "ormah_site.cli", *args], env=env, capture_output=True,
                              text=True, timeout=180)

    try:
        assert ormah("init", "--name", "Robin", "--quiet").returncode == 0
        first = ormah("sync", str(root))
        assert (first.returncode, first.stderr) == (0, "")
        assert first.stdout.startswith(f"Synced {root}: 1 to the folder")  # the self node
        (root / "nodes" / "broken.md").write_text("---\nid: [\n---\n")
        second = ormah("sync", str(root))
        assert second.returncode == 1
        assert "Malformed (left untouched): nodes/broken.md" in second.stderr
        assert "Traceback" not in second.stderr
    finally:
        pg_databases.drop_created()
