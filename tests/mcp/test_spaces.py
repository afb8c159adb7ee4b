"""Space detection (reference §9): ORMAH_SPACE > git top-level name > folder name; $HOME and / give none."""

from __future__ import annotations

from pathlib import Path, PurePosixPath as P

import pytest

from memory.spaces import git_toplevel, space_detect

HOME = P("/home/dana")


@pytest.mark.parametrize("configured,cwd,git_root,expected", [
    ("billing", P("/home/dana/src/search"), P("/home/dana/src/search"), "billing"),
    ("  billing  ", P("/"), None, "billing"),
    (None, P("/home/dana/src/search/app/views"), P("/home/dana/src/search"), "search"),
    (None, P("/home/dana/notes"), None, "notes"),
    ("", P("/home/dana/notes"), None, "notes"),
    (None, HOME, None, None),
    (None, P("/"), None, None),
    (None, P("/home/dana/dotfiles-sub"), HOME, None),
    (None, P("/srv/a\\b"), None, "a-b"),
    (None, P("/srv/None"), None, None),
    (None, P("/srv/" + "x" * 150), None, "x" * 100),
    (None, None, None, None),
])
def test_space_detect(configured, cwd, git_root, expected):
    assert space_detect(configured=configured, cwd=cwd, home=HOME, git_root=git_root) == expected


def test_git_toplevel_finds_the_folder_holding_dot_git(tmp_path: Path):
    repo = tmp_path / "billing"
    (repo / ".git").mkdir(parents=True)
    (repo / "src" / "api").mkdir(parents=True)
    assert git_toplevel(repo / "src" / "api") == repo


def test_git_toplevel_accepts_a_worktree_file(tmp_path: Path):
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: /elsewhere\n")
    assert git_toplevel(tmp_path / "wt") == tmp_path / "wt"


def test_git_toplevel_of_a_folder_outside_any_repo_is_none(tmp_path: Path):
    assert git_toplevel(tmp_path) is None


def test_git_toplevel_survives_names_the_os_refuses(tmp_path: Path):
    assert git_toplevel(tmp_path / ("0" * 5000)) == git_toplevel(tmp_path)
