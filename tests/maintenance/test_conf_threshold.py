"""AUTO_LINK_THRESHOLD has one default, in settings: the maintenance conf reads the settings' value as memory.conf does
and keeps no 0.65 of its own."""

from __future__ import annotations

import pytest

from maintenance.conf import get_conf as maintenance_conf
from memory.conf import get_conf as memory_conf


def test_the_maintenance_conf_reads_the_settings_threshold(settings):
    settings.ORMAH = {**settings.ORMAH, "AUTO_LINK_THRESHOLD": 0.71}
    assert maintenance_conf().auto_link_threshold == memory_conf().auto_link_threshold == 0.71


def test_the_maintenance_conf_has_no_default_of_its_own(settings):
    settings.ORMAH = {k: v for k, v in settings.ORMAH.items() if k != "AUTO_LINK_THRESHOLD"}
    with pytest.raises(KeyError):
        memory_conf()
    with pytest.raises(KeyError):
        maintenance_conf()
