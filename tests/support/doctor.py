"""`ormah doctor --json` read by the tests: its checks by name (the command exits non-zero when a check fails)."""

from __future__ import annotations

import io
import json

from django.core.management import call_command


def doctor_checks() -> dict:
    out = io.StringIO()
    try:
        call_command("doctor", "--json", stdout=out)
    except SystemExit:
        pass
    return {c["check"]: c for c in json.loads(out.getvalue())["checks"]}
