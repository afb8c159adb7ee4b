"""The whisper ledger's bounded columns on both engines (session 22, review8; runs on SQLite and PostgreSQL).

A synthetic-prompt pattern configured longer than 200 characters (ORMAH_WHISPER_SYNTHETIC_PATTERNS: a team's list
of CI and bot markers as one alternation) is what the ledger records as `matched_pattern`, a varchar(200): on
PostgreSQL every prompt it matched answered `silent:error` and was not logged; SQLite stored it. The ledger keeps
its first 200 characters now."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from whisper.models import WhisperDecisionRow

TOKEN = "test-token"
BOTS = "|".join(["automated", "renovate", "dependabot", "github-actions", "gitlab-ci", "jenkins", "buildkite",
                 "circleci", "travis", "drone", "argo", "flux", "atlantis", "spacelift", "pulumi", "crossplane"])
PATTERN = rf"^\[({BOTS})\] (build|deploy|release|sync|update|bump|scan|lint|test|check|report) " \
          r"(succeeded|failed|started|queued|cancelled|skipped|timed out|retried)"


@pytest.mark.django_db(transaction=True)
def test_a_long_synthetic_pattern_is_silence_and_logged(home, settings):
    assert len(PATTERN) > 200
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN, "WHISPER_SYNTHETIC_PATTERNS": PATTERN}
    client = Client(headers={"Authorization": f"Bearer {TOKEN}"})

    response = client.post("/api/agent/whisper", data=json.dumps({"prompt": "[renovate] bump succeeded for api"}),
                           content_type="application/json")

    body = response.json()
    assert (response.status_code, body["decision"]) == (200, "silent:synthetic")  # before, on PostgreSQL: silent:error
    row = WhisperDecisionRow.objects.get(id=body["whisper_log_id"])
    assert row.matched_pattern == PATTERN[:200]
