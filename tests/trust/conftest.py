"""Trust fixtures: a real git repository made in the test, and helpers that write through the real services."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

NOW = datetime(2026, 7, 1, 12, 0, tzinfo=UTC)


def git(repo: Path, *args: str) -> str:
    """Run git in `repo` and return its stdout (stripped); fails the test when git fails."""
    done = subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True)
    return done.stdout.strip()


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Repo:
    """A git repository with one committed file, `src/app.py`, on branch `main`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main", "--template=")  # no sample hooks: fewer files to create and delete
        git(root, "config", "user.name", "Ormah Test")
        git(root, "config", "user.email", "test@ormah.invalid")
        git(root, "config", "commit.gpgsign", "false")
        self.write("src/app.py", "PORT = 8080\n")
        self.commit("first")

    @property
    def branch(self) -> str:
        return git(self.root, "rev-parse", "--abbrev-ref", "HEAD")

    @property
    def head(self) -> str:
        return git(self.root, "rev-parse", "HEAD")

    def write(self, rel: str, text: str) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def commit(self, message: str) -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)
        return self.head


@pytest.fixture
def repo(tmp_path: Path) -> Repo:
    """A fresh repository under the test's temporary folder."""
    return Repo(tmp_path / "work" / "shop")


@pytest.fixture
def api(home, db, settings):
    """A client of the real API with a known bearer token."""
    from tests.api.conftest import TOKEN, ApiClient

    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return ApiClient(TOKEN)
