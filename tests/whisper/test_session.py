"""The session buffer: 5 prompts, 10 minutes, per session, in a table every worker shares."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from whisper.conf import WhisperConf
from whisper.models import SessionPromptRow
from whisper.session import buffer_append, buffer_read

from .conftest import NOW

pytestmark = pytest.mark.django_db
CONF = WhisperConf()


def add(session, prompt, minutes_ago=0.0, vector=None):
    buffer_append(session_id=session, prompt=prompt, vector=vector, now=NOW - timedelta(minutes=minutes_ago), conf=CONF)


def test_first_prompt_of_a_session_has_no_recent_prompts():
    assert buffer_read(session_id="s1", now=NOW, conf=CONF) is None


def test_recent_prompts_oldest_first_with_vectors():
    add("s1", "one", 3, vector=np.array([1.0, 0.0], dtype=np.float32))
    add("s1", "two", 2)
    recent = buffer_read(session_id="s1", now=NOW, conf=CONF)
    assert [r.prompt for r in recent] == ["one", "two"]
    assert recent[0].vector.tolist() == [1.0, 0.0]
    assert recent[1].vector is None


def test_the_buffer_keeps_the_last_five():
    for i in range(7):
        add("s1", f"p{i}", 7 - i)
    assert [r.prompt for r in buffer_read(session_id="s1", now=NOW, conf=CONF)] == ["p2", "p3", "p4", "p5", "p6"]
    assert SessionPromptRow.objects.filter(session_id="s1").count() == 5


def test_a_pause_longer_than_ten_minutes_starts_afresh():
    add("s1", "old", 11)
    assert buffer_read(session_id="s1", now=NOW, conf=CONF) is None


def test_old_rows_of_every_session_are_pruned_on_append():
    add("s1", "old", 30)
    add("s2", "new")
    assert list(SessionPromptRow.objects.values_list("prompt", flat=True)) == ["new"]


def test_sessions_do_not_see_each_other():
    add("s1", "mine")
    assert buffer_read(session_id="s2", now=NOW, conf=CONF) is None


def test_no_session_id_means_no_buffer():
    add(None, "anonymous")
    assert (buffer_read(session_id=None, now=NOW, conf=CONF), SessionPromptRow.objects.count()) == (None, 0)
