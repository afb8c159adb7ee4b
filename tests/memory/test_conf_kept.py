"""The memory app's conf is built once for unchanged settings and again whenever settings.ORMAH differs (issue 13,
session 26: a remember asked for it ~6 times, each a new object)."""

from __future__ import annotations

from pathlib import Path

from django.test import override_settings

from memory.conf import get_conf


def test_unchanged_settings_give_the_conf_built_before(home):
    assert get_conf() is get_conf()


def test_an_override_is_seen_and_the_old_settings_come_back(home, settings):
    before = get_conf()
    with override_settings(ORMAH={**settings.ORMAH, "CORE_CAP": 7, "HOME": home / "elsewhere"}):
        inside = get_conf()
        assert (inside.core_cap, inside.home) == (7, home / "elsewhere")
    after = get_conf()
    assert (after.core_cap, after.home) == (before.core_cap, home) and after == before


def test_a_key_set_in_place_is_seen(home, settings):
    settings.ORMAH = dict(settings.ORMAH)  # a copy of the test's own: set in place below, undone with it
    assert get_conf().self_name != "Dana"
    settings.ORMAH["SELF_NAME"] = "Dana"
    settings.ORMAH["AUTO_LINK_THRESHOLD"] = "0.5"
    settings.ORMAH["SPACE"] = "work"
    conf = get_conf()
    assert (conf.self_name, conf.auto_link_threshold, conf.default_space) == ("Dana", 0.5, "work")


def test_another_home_gives_its_paths(settings, tmp_path):
    for where in ("one", "two", "one"):
        settings.ORMAH = {**settings.ORMAH, "HOME": tmp_path / where, "MEMORY_DIR": tmp_path / where / "memory",
                          "TOKEN_FILE": tmp_path / where / "api_token"}
        conf = get_conf()
        assert (conf.home, conf.memory_dir, conf.token_file, conf.lock_file) == (
            tmp_path / where, tmp_path / where / "memory", tmp_path / where / "api_token",
            tmp_path / where / ".write.lock")
        assert isinstance(conf.home, Path)
