"""Every raw-cosine gate of whisper can be moved from the environment (docs/recall.md "Another embedding model": a
model whose cosines sit on another scale needs them moved), and the defaults stay MiniLM-L6's."""

import os
import subprocess
import sys

import pytest

from whisper.conf import WhisperConf, get_conf

COSINES = {
    "IDENTITY_GATE": "identity_gate",
    "IDENTITY_GATE_NO_WORD": "identity_gate_no_word",
    "FOLLOW_UP_COSINE": "follow_up_cosine",
    "OVERLAP_COSINE_FLOOR": "overlap_cosine_floor",
    "INTENT_THRESHOLD": "intent_threshold",
    "STANDOUT_MIN_COSINE": "standout_min_cosine",
}


def test_the_defaults_are_the_calibrated_ones(settings):
    conf, defaults = get_conf(), WhisperConf()
    assert {f: getattr(conf, f) for f in COSINES.values()} == {f: getattr(defaults, f) for f in COSINES.values()}


@pytest.mark.parametrize(("key", "field"), sorted(COSINES.items()))
def test_a_setting_moves_its_gate(settings, key, field):
    settings.ORMAH = {**settings.ORMAH, f"WHISPER_{key}": 0.877}
    assert getattr(get_conf(), field) == 0.877


def test_the_environment_reaches_the_settings(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}, "ORMAH_HOME": str(tmp_path),
           "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    env.update({f"ORMAH_WHISPER_{key}": "0.9" for key in COSINES})
    code = ("import django; django.setup(); from whisper.conf import get_conf; c = get_conf(); "
            f"print(sorted({{getattr(c, f) for f in {sorted(COSINES.values())!r}}}))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[0.9]"


def test_the_environment_reaches_the_standout_numbers(tmp_path):
    # whisper.conventions' standout z-score and set size (not cosines) move from the environment too; defaults 4.5 / 8
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}, "ORMAH_HOME": str(tmp_path),
           "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    code = ("import django; django.setup(); from whisper.conf import get_conf; c = get_conf(); "
            "print(c.standout_z, c.standout_min_cosine, c.standout_min_set)")
    run = [sys.executable, "-c", code]
    out = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "4.5 0.25 8"
    env.update({"ORMAH_WHISPER_STANDOUT_Z": "5.0", "ORMAH_WHISPER_STANDOUT_MIN_COSINE": "0.3",
                "ORMAH_WHISPER_STANDOUT_MIN_SET": "12"})
    out = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "5.0 0.3 12"
