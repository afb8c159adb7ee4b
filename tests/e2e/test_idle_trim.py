"""The web worker's idle trim (ormah_site.gunicorn_conf): it waits while any request is in flight and is woken when
the last one ends, so a busy worker's heap is never trimmed under its requests."""

from __future__ import annotations

import threading

import pytest

from ormah_site import gunicorn_conf


@pytest.fixture(autouse=True)
def fresh_idle_state(monkeypatch):
    """Each case starts with no request in flight and the wake cleared; the module's own state comes back after."""
    monkeypatch.setattr(gunicorn_conf, "_in_flight", 0)
    monkeypatch.setattr(gunicorn_conf, "_went_idle", threading.Event())


def test_the_idle_trim_is_woken_only_when_the_last_request_in_flight_ends():
    gunicorn_conf.pre_request(None, None)
    gunicorn_conf.pre_request(None, None)
    gunicorn_conf.post_request(None, None, {}, None)
    one_left = gunicorn_conf._went_idle.is_set()
    gunicorn_conf.post_request(None, None, {}, None)
    assert (one_left, gunicorn_conf._went_idle.is_set(), gunicorn_conf._in_flight) == (False, True, 0)


def test_a_request_that_starts_cancels_the_wake():
    gunicorn_conf.pre_request(None, None)
    gunicorn_conf.post_request(None, None, {}, None)
    gunicorn_conf.pre_request(None, None)
    woken = gunicorn_conf._went_idle.is_set()
    gunicorn_conf.post_request(None, None, {}, None)
    assert (woken, gunicorn_conf._in_flight) == (False, 0)
