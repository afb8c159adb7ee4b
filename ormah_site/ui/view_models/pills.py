"""Trust warnings as people read them: a short pill in plain words and the detail next to it."""

from __future__ import annotations

from dataclasses import dataclass

from memory.domain.trust import RecallWarning, VerificationWarning

WORDS = {
    "temporal_contradiction": "Contradicted", "temporal_supersession": "Superseded",
    "citation_missing": "Evidence missing", "file_missing": "File gone", "file_hash_mismatch": "File changed",
    "branch_drift": "Other branch", "commit_drift": "Older commit",
}
CHECK_WORDS = {"failed": "Check failed", "stale": "Check out of date", "unknown": "Check inconclusive",
               "warning": "Check warned"}


@dataclass(frozen=True)
class Pill:
    kind: str  # the warning's code, for styling and tests
    label: str  # two or three plain words
    detail: str  # the warning's own message


def pill(warning: RecallWarning | VerificationWarning) -> Pill:
    """The pill of one warning."""
    if isinstance(warning, VerificationWarning):
        status = warning.status.value
        detail = f"{warning.checker or 'check'}: {warning.message}" if warning.message else warning.checker or ""
        return Pill(kind=f"verification_{status}", label=CHECK_WORDS.get(status, "Check"), detail=detail)
    kind = warning.kind.value
    return Pill(kind=kind, label=WORDS.get(kind, kind.replace("_", " ").capitalize()), detail=warning.message)
