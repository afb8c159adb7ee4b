"""The token file is read again only when it changed (issue 13, session 26: it was read at every request), and a
token rotated or edited is honoured from the next request on, the old one refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.test import Client

from ormah_site import tokens

A, B, C = "token-aaaaaaaaaaaaaaaa", "token-bbbbbbbbbbbbbbbb", "token-cccccccccccccccc"  # one length: a size never tells


def _status(token: str) -> int:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}").get("/api/admin/health").status_code


@pytest.fixture
def reads(monkeypatch, home):
    """How many times the home's token file was read (Path.read_text, called through)."""
    count = [0]
    real = Path.read_text

    def read_text(self, *args, **kwargs):
        if self == home / "api_token":
            count[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", read_text)
    return count


def _rotate(path: Path, token: str) -> None:
    """A new file renamed over the old one, as token_ensure writes it."""
    tmp = path.with_suffix(".new")
    tmp.write_text(token + "\n")
    os.replace(tmp, path)


def test_an_unchanged_token_file_is_read_once(home, db, reads, monkeypatch):
    monkeypatch.setattr(tokens, "SETTLED_SECONDS", 0.0, raising=False)  # a file just written counts as settled
    (home / "api_token").write_text(A + "\n")
    assert [_status(A) for _ in range(3)] == [200, 200, 200]
    assert _status(B) == 401
    assert reads[0] == 1


def test_a_rotated_token_is_honoured_and_the_old_refused(home, db, monkeypatch):
    monkeypatch.setattr(tokens, "SETTLED_SECONDS", 0.0, raising=False)
    path = home / "api_token"
    path.write_text(A + "\n")
    assert (_status(A), _status(B)) == (200, 401)
    _rotate(path, B)
    assert (_status(B), _status(A)) == (200, 401)
    path.unlink()
    tokens.token_ensure()  # a new token file, as `ormah init` makes one
    new = path.read_text().strip()
    assert (_status(new), _status(B)) == (200, 401)


def test_a_token_edited_in_place_at_once_is_honoured(home, db, reads):
    path = home / "api_token"
    path.write_text(A + "\n")
    assert _status(A) == 200
    with open(path, "r+") as handle:  # the same inode and size, within the clock tick of the last write
        handle.write(C + "\n")
    assert (_status(C), _status(A)) == (200, 401)
    assert reads[0] == 3  # a file changed within SETTLED_SECONDS is read at every request


def test_a_deleted_token_file_refuses_every_token(home, db, monkeypatch):
    monkeypatch.setattr(tokens, "SETTLED_SECONDS", 0.0, raising=False)
    path = home / "api_token"
    path.write_text(A + "\n")
    assert _status(A) == 200
    path.unlink()
    assert _status(A) == 401
