"""The spine's CLI commands: clear messages, non-zero exit on bad input, doctor findings."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memory.models import NodeRow


def run(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_remember_blank_content_is_a_clear_error(home, db):
    with pytest.raises(CommandError, match="content"):
        run("remember", "   ")


def test_remember_unknown_type_is_a_clear_error(home, db):
    with pytest.raises(CommandError, match="type"):
        run("remember", "hello", "--type", "nonsense")


def test_remember_then_show(home, db):
    node_id = json.loads(run("remember", "The staging database is on port 5433", "--json"))["id"]
    assert "port 5433" in run("show", node_id[:8])


def test_show_unknown_id_fails(home, db):
    with pytest.raises(CommandError, match="No memory"):
        run("show", "deadbeef")


def test_doctor_reports_malformed_file_and_exits_nonzero(home, db):
    run("remember", "A healthy memory", "--json")
    bad = home / "memory" / "nodes" / "fact_bad_0000aaaa.md"
    bad.write_text("no front matter here\n")
    before = bad.read_bytes()
    with pytest.raises(SystemExit) as exit_:
        run("doctor", "--json")
    assert exit_.value.code == 1
    assert bad.read_bytes() == before


def test_doctor_is_clean_on_a_fresh_home(home, db):
    (home / "api_token").write_text("t")
    (home / "api_token").chmod(0o600)
    run("remember", "A healthy memory", "--json")
    report = json.loads(run("doctor", "--json"))
    assert report["ok"] is True, report


def test_import_plain_markdown_folder(home, db, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "deploy.md").write_text("# Deploy steps\n\nRun migrations, then restart the workers.\n")
    (notes / "empty.md").write_text("")
    out = run("import", str(notes), "--json")
    assert json.loads(out)["imported"] == 1
    assert NodeRow.objects.get(title="Deploy steps").content.startswith("# Deploy steps")


def test_rebuild_json_reports_counts(home, db):
    run("remember", "One", "--json")
    run("remember", "Two", "--json")
    report = json.loads(run("rebuild", "--json"))
    assert (report["indexed"], report["unchanged"], report["embedded"]) == (0, 2, 0)  # kept by their file hash


def test_rebuild_verify_rewrites_every_row(home, db):
    run("remember", "One", "--json")
    run("remember", "Two", "--json")
    report = json.loads(run("rebuild", "--json", "--verify"))
    assert (report["indexed"], report["unchanged"], report["embedded"]) == (2, 0, 0)
