"""Early exits before any model runs: empty, short, machine-generated (pasted output included) and acknowledgement
prompts."""

from __future__ import annotations

from whisper.conf import WhisperConf
from whisper.output_lines import is_output_alone
from whisper.pasted import is_pasted_output
from whisper.state import SILENT_ACK, SILENT_EMPTY, SILENT_SHORT, SILENT_SYNTHETIC, Deps, WhisperRun
from whisper.text import alnum_count, is_acknowledgement, is_blank, synthetic_match

MIN_ALNUM = 3
PASTED_OUTPUT = "(pasted output)"  # the ledger's matched_pattern when the prompt is output alone (whisper.pasted)


def early_exit(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Silence for prompts that cannot or should not trigger recall."""
    prompt = run.prompt or ""
    if is_blank(prompt):
        return SILENT_EMPTY
    pattern = synthetic_match(prompt, conf.synthetic_patterns)
    if pattern:
        run.matched_pattern = pattern
        return SILENT_SYNTHETIC
    if alnum_count(prompt) < MIN_ALNUM:
        return SILENT_SHORT
    if is_pasted_output(prompt) or is_output_alone(prompt):
        run.matched_pattern = PASTED_OUTPUT
        return SILENT_SYNTHETIC
    if is_acknowledgement(prompt):
        return SILENT_ACK
    return None
