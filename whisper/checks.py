"""System checks of the whisper settings: a bad ORMAH_WHISPER_GATE_WEIGHTS stops `ormah serve` (and `ormah admin
check`) with a clear message at start, instead of failing every whisper call (whisper silent, the error logged)."""

from __future__ import annotations

from django.conf import settings
from django.core.checks import Error, register

from whisper.conf import GATE_WEIGHTS, parse_gate_weights


@register()
def check_gate_weights(app_configs=None, **kwargs):
    """ORMAH_WHISPER_GATE_WEIGHTS: unset, "off", or as many finite numbers as the gate has weights (an older gate's
    count is not)."""
    raw = settings.ORMAH.get("WHISPER_GATE_WEIGHTS")
    try:
        parse_gate_weights(raw)
    except ValueError as exc:  # Trigger: a stale or mistyped setting. Why: every whisper call would fail. Outcome: error.
        return [Error(
            f"ORMAH_WHISPER_GATE_WEIGHTS is {raw!r}: {exc}",
            hint=f"Unset it for the fitted gate ({len(GATE_WEIGHTS)} weights: intercept and inputs, whisper/conf.py), "
                 "set it to 'off' for the probability gate, or give the gate's current number of weights.",
            id="whisper.E001",
        )]
    return []
