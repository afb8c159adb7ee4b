"""The maintenance app's typed, frozen configuration, built from settings.ORMAH (docs/jobs.md explains each)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

PROVIDER_ALIASES = {
    "none": "",
    "": "",
    "openai": "maintenance.llm.openai.OpenAICompatibleProvider",
}


@dataclass(frozen=True, slots=True)
class LLMConf:
    provider: str  # dotted path; "" means no LLM
    base_url: str
    model: str
    api_key: str | None
    timeout: float
    max_retries: int
    backoff: float
    max_calls_per_run: int
    pairs_per_call: int


@dataclass(frozen=True, slots=True)
class MaintenanceConf:
    home: Path
    llm: LLMConf
    time_limit: float
    proposal_cap: int
    proposal_ttl_days: float
    session_minutes: float
    batch_size: int
    max_edges_per_run: int
    auto_merge_threshold: float
    auto_link_threshold: float
    cross_space_penalty: float
    audit_retention_days: int
    audit_max_rows: int
    ledger_retention_days: int
    merge_undo_days: int
    surfacing_retention_days: int
    verification_retention_days: int

    @property
    def job_lock_file(self) -> Path:
        return self.home / ".maintenance.lock"


def get_conf() -> MaintenanceConf:
    """Build the conf from settings (cheap; read per call so tests can override settings)."""
    o = settings.ORMAH
    provider = str(o.get("LLM_PROVIDER") or "none").strip()
    llm = LLMConf(
        provider=PROVIDER_ALIASES.get(provider.lower(), provider),
        base_url=str(o.get("LLM_BASE_URL") or "").rstrip("/"),
        model=str(o.get("LLM_MODEL") or ""),
        api_key=o.get("LLM_API_KEY"),
        timeout=float(o.get("LLM_TIMEOUT_SECONDS", 60.0)),
        max_retries=int(o.get("LLM_MAX_RETRIES", 2)),
        backoff=float(o.get("LLM_BACKOFF_SECONDS", 1.0)),
        max_calls_per_run=int(o.get("LLM_MAX_CALLS_PER_RUN", 40)),
        pairs_per_call=max(1, int(o.get("LLM_PAIRS_PER_CALL", 8))),
    )
    return MaintenanceConf(
        home=Path(o["HOME"]),
        llm=llm,
        time_limit=float(o.get("MAINTENANCE_JOB_TIME_LIMIT_SECONDS", 60.0)),
        proposal_cap=int(o.get("MAINTENANCE_PROPOSAL_CAP", 200)),
        proposal_ttl_days=float(o.get("MAINTENANCE_PROPOSAL_TTL_DAYS", 14.0)),
        session_minutes=float(o.get("MAINTENANCE_TIMEOUT_MINUTES", 30.0)),
        batch_size=int(o.get("MAINTENANCE_BATCH_SIZE", 25)),
        max_edges_per_run=int(o.get("MAINTENANCE_MAX_EDGES_PER_RUN", 500)),
        auto_merge_threshold=float(o.get("MAINTENANCE_AUTO_MERGE_THRESHOLD", 0.85)),
        auto_link_threshold=float(o["AUTO_LINK_THRESHOLD"]),  # one default: settings
        cross_space_penalty=float(o.get("CROSS_SPACE_PENALTY", 0.1)),
        audit_retention_days=int(o.get("MAINTENANCE_AUDIT_RETENTION_DAYS", 180)),
        audit_max_rows=int(o.get("MAINTENANCE_AUDIT_MAX_ROWS", 50_000)),
        ledger_retention_days=int(o.get("MAINTENANCE_LEDGER_RETENTION_DAYS", 30)),
        merge_undo_days=int(o.get("MAINTENANCE_MERGE_UNDO_DAYS", 90)),
        surfacing_retention_days=int(o.get("MAINTENANCE_SURFACING_RETENTION_DAYS", 90)),
        verification_retention_days=int(o.get("MAINTENANCE_VERIFICATION_RETENTION_DAYS", 180)),
    )
