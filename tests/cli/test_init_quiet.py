"""`ormah init --quiet` is quiet: nothing on stdout or stderr when all goes well (the model check's INFO log line
reached stderr), while errors are still shown."""

from __future__ import annotations

from tests.cli.test_cli import ormah


def test_init_quiet_prints_nothing(tmp_path):
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    # a model cache of its own: the first check of the model is the one that logs (INFO)
    out = ormah("init", "--quiet", home=home, ORMAH_MODEL_CACHE_DIR=str(tmp_path / "models"))
    assert out.returncode == 0, out.stderr
    assert (out.stdout, out.stderr) == ("", "")
    assert (home / "index.sqlite3").exists()
    # the log file still has the INFO line the console no longer shows
    assert "Verified embedding model" in (home / "logs" / "ormah.log").read_text()


def test_init_quiet_still_shows_errors(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "memory" / "nodes").mkdir(parents=True)
    (home / "memory" / "nodes" / "self.md").write_text("---\nid: x\ntype: persn\nsource: system:self\n---\nme\n")
    out = ormah("init", "--quiet", home=home)
    assert out.returncode == 0, out.stderr
    assert "is malformed" in out.stderr
