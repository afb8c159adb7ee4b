"""Claim: the presented token is compared with the real one in constant time (hmac.compare_digest), in exactly
one place, for every route (docs/security.md §2).

A timing measurement would be flaky on a shared machine; instead the tests prove every request's comparison goes
through hmac.compare_digest with both full byte strings, and that no other code compares tokens.
"""

from __future__ import annotations

import ast
import hmac
from pathlib import Path

import pytest
from django.test import Client

from ormah_site import tokens
from tests.security.conftest import TOKEN

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("memory", "whisper", "maintenance", "ormah_site")


@pytest.fixture
def spy(monkeypatch):
    calls, original = [], hmac.compare_digest

    def compare(a, b):
        calls.append((a, b))
        return original(a, b)

    monkeypatch.setattr(tokens.hmac, "compare_digest", compare)
    return calls


@pytest.mark.parametrize("presented, status", [(TOKEN, 200), ("x", 401), (TOKEN[:-1] + "X", 401),
                                               (TOKEN * 4, 401)])
def test_every_request_is_judged_by_compare_digest_on_the_whole_token(api_token, db, spy, presented, status):
    response = Client(HTTP_AUTHORIZATION=f"Bearer {presented}").get("/api/admin/health")
    assert response.status_code == status
    assert spy == [(presented.encode(), TOKEN.encode())]


def test_the_docs_guard_uses_the_same_comparison(api_token, db, spy):
    Client(HTTP_AUTHORIZATION="Bearer nope").get("/api/openapi.json")
    assert spy and all(b == TOKEN.encode() for _, b in spy)


def test_no_other_code_reads_the_token_to_compare_it():
    """Only ormah_site/tokens.py compares; the MCP server and the hook read the token to send it."""
    readers = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Compare):
                    names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                    names |= {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}
                    if any("token" in name.lower() and "tokens" not in name.lower() for name in names):
                        readers.setdefault(str(path.relative_to(ROOT)), []).append(ast.unparse(node))
    assert {path: [c for c in comps if "==" in c or "!=" in c] for path, comps in readers.items()
            if any("==" in c or "!=" in c for c in comps)} == {}
