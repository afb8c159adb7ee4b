"""whisper.E001: a bad ORMAH_WHISPER_GATE_WEIGHTS (an older gate's 9 numbers; the gate now has 10) stops the start
with a clear message, instead of failing every whisper call."""

import os
import subprocess
import sys

import pytest

from whisper.checks import check_gate_weights
from whisper.conf import GATE_WEIGHTS

NINE = "-3.1 1.2 3.3 0.7 2.0 1.1 -1.2 0.4 0.2"


@pytest.mark.parametrize(("raw", "ids"), [
    (None, []),
    ("off", []),
    (" ".join(str(w) for w in GATE_WEIGHTS), []),
    (NINE, ["whisper.E001"]),
    ("1 2 three 4 5 6 7", ["whisper.E001"]),
    (" ".join(["nan"] + [str(w) for w in GATE_WEIGHTS[1:]]), ["whisper.E001"]),
    (" ".join([str(w) for w in GATE_WEIGHTS[:-1]] + ["inf"]), ["whisper.E001"]),
])
def test_the_gate_weights_setting_is_checked(settings, raw, ids):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_GATE_WEIGHTS": raw}
    assert [error.id for error in check_gate_weights()] == ids


def test_an_old_nine_weight_setting_stops_the_checks_with_a_clear_error(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "ORMAH_DATABASE_URL"}, "ORMAH_HOME": str(tmp_path),
           "ORMAH_WHISPER_GATE_WEIGHTS": NINE, "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    out = subprocess.run([sys.executable, "manage.py", "check"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "(whisper.E001) ORMAH_WHISPER_GATE_WEIGHTS is" in out.stderr and f"needs {len(GATE_WEIGHTS)} finite numbers" in out.stderr
    assert "Traceback" not in out.stderr, out.stderr
