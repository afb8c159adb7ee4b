"""bench.soak's --home-cache and its start: a folder that is not the bench's is refused and left as it was; a cached
home is reused only for the same memories and the same --repo code; a server whose workers never all serve stops
the run with a clear error instead of measuring it.

Real folders and files throughout; the server of the last test is a real process tree read from /proc.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench import soak
from bench._common import corpus
from bench.serve_tree import children, free_port
from bench.soak_home import (CACHE_MARK, SoakError, cache_home, cached_home, claim_cache, code_digest,
                             home_stamp)


def checkout(root: Path) -> Path:
    """A --repo stand-in holding the packages whose code the stamp covers (one file each)."""
    for package in ("memory", "whisper", "maintenance", "ormah_site"):
        (root / package).mkdir(parents=True)
        (root / package / "index.py").write_text(f"# {package}\n")
    return root


def built_home(root: Path, text: str) -> Path:
    home = root / "built"
    shutil.rmtree(home, ignore_errors=True)
    (home / "memory" / "nodes").mkdir(parents=True)
    (home / "memory" / "nodes" / "a.md").write_text(text)
    return home


def test_a_folder_of_someone_elses_files_is_refused_and_left_as_it_was(tmp_path, capsys):
    work = tmp_path / "work"
    (work / "notes").mkdir(parents=True)
    (work / "notes" / "plan.md").write_text("mine")
    (work / "soak-home.txt").write_text("not the mark")
    code = soak.main(["--home-cache", str(work), "--seconds", "1", "--memories", "5"])
    assert code == 2
    assert "is not empty and has no soak-home file" in capsys.readouterr().err
    assert sorted(p.relative_to(work).as_posix() for p in work.rglob("*")) == ["notes", "notes/plan.md",
                                                                              "soak-home.txt"]
    assert (work / "notes" / "plan.md").read_text() == "mine"


def test_a_file_given_as_the_cache_is_refused(tmp_path):
    (tmp_path / "f").write_text("x")
    with pytest.raises(SoakError, match="is a file, not a folder"):
        claim_cache(tmp_path / "f")
    assert (tmp_path / "f").read_text() == "x"


@pytest.mark.parametrize("exists", [False, True])
def test_a_new_or_empty_folder_becomes_the_benchs(tmp_path, exists):
    cache = tmp_path / "cache"
    if exists:
        cache.mkdir()
    claim_cache(cache)
    assert [p.name for p in cache.iterdir()] == [CACHE_MARK]
    claim_cache(cache)  # its own folder again: accepted


def test_writing_a_home_into_the_cache_touches_only_the_benchs_entries(tmp_path):
    cache = tmp_path / "cache"
    claim_cache(cache)
    (cache / "later.txt").write_text("someone put this here")
    cache_home(cache, "stamp one\n", built_home(tmp_path, "one"))
    cache_home(cache, "stamp one\n", built_home(tmp_path, "one again"))  # the same stamp rebuilt: its slot replaced
    assert (cache / "later.txt").read_text() == "someone put this here"
    assert (cached_home(cache, "stamp one\n") / "memory" / "nodes" / "a.md").read_text() == "one again"
    assert not [p for p in cache.iterdir() if p.name.endswith(".partial")]


def test_a_cache_of_the_first_layout_loses_only_its_one_home(tmp_path):
    cache = tmp_path / "cache"
    (cache / "home" / "memory").mkdir(parents=True)
    (cache / CACHE_MARK).write_text("memories=1000 seed=1 schema=ab12\n")
    (cache / "other.txt").write_text("keep")
    claim_cache(cache)
    assert sorted(p.name for p in cache.iterdir()) == ["other.txt", CACHE_MARK]


def test_the_stamp_follows_the_memories_and_every_file_of_the_repo_code(tmp_path):
    repo = checkout(tmp_path / "repo")
    memories = corpus(5, seed=1)
    stamp = home_stamp(memories, 1, repo)
    assert home_stamp(corpus(5, seed=1), 1, repo) == stamp  # deterministic
    assert home_stamp(corpus(5, seed=2), 2, repo) != stamp
    assert home_stamp(corpus(6, seed=1)[:5], 1, repo) == stamp  # the same five memories
    digest = code_digest(repo)
    for package in ("memory", "whisper"):
        before = code_digest(repo)
        (repo / package / "index.py").write_text(f"# {package}, the other revision\n")
        assert code_digest(repo) != before
    (repo / "memory" / "__pycache__").mkdir()
    (repo / "memory" / "__pycache__" / "index.cpython-311.pyc").write_bytes(b"\0")
    changed = home_stamp(memories, 1, repo)
    assert changed != stamp and code_digest(repo) != digest
    assert home_stamp(memories, 1, repo) == changed  # compiled files do not count


def test_an_ab_pair_of_checkouts_keeps_a_home_each_and_never_gets_the_others(tmp_path):
    before, after = checkout(tmp_path / "before"), checkout(tmp_path / "after")
    (after / "memory" / "index.py").write_text("# the change under test\n")
    memories = corpus(5, seed=1)
    cache = tmp_path / "cache"
    claim_cache(cache)
    stamp_before, stamp_after = home_stamp(memories, 1, before), home_stamp(memories, 1, after)
    cache_home(cache, stamp_before, built_home(tmp_path, "indexed by before"))
    assert cached_home(cache, stamp_after) is None
    cache_home(cache, stamp_after, built_home(tmp_path, "indexed by after"))
    for stamp, text in ((stamp_before, "indexed by before"), (stamp_after, "indexed by after")):
        assert (cached_home(cache, stamp) / "memory" / "nodes" / "a.md").read_text() == text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")
def test_workers_that_never_all_serve_stop_the_run_with_a_clear_error():
    # A supervisor whose child is a "gunicorn master" wanting two workers that never come.
    master = f'{sys.executable} -c "import time; time.sleep(30)" gunicorn --workers 2 --threads 4'
    supervisor = subprocess.Popen(["sh", "-c", f"{master} & wait"])
    try:
        time.sleep(0.5)
        with pytest.raises(SoakError, match=r"not all serving after 1 s: 2 wanted, 0 running, 0 polling"):
            soak._wait_for_workers(supervisor.pid, free_port(), seconds=1.0)
    finally:
        for child in children(supervisor.pid):
            os.kill(child, signal.SIGKILL)
        supervisor.kill()
        supervisor.wait()
