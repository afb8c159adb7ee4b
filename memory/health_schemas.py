"""Ninja schemas of the index and health routes: the sync report of a rebuild, and the health check (extensions,
model, counts, drift between the files and the index). memory.schemas re-exports the two the routes answer with."""

from __future__ import annotations

from typing import Literal

from ninja import Schema
from pydantic import Field


class MalformedOut(Schema):
    path: str
    reason: str


class SyncReportOut(Schema):
    indexed: int
    unchanged: int
    removed: int
    embedded: int
    malformed: list[MalformedOut]
    reembedded_for_model: str | None


class RebuildOut(Schema):
    status: str
    report: SyncReportOut


class ExtensionsOut(Schema):
    sqlite: str | None = Field(None, description="SQLite's version (the default engine)")
    postgresql: str | None = Field(None, description="PostgreSQL's version (ORMAH_DATABASE_URL; docs/team-server.md)")
    vec: str | None = Field(None, description="sqlite-vec's or pgvector's version")
    fts5: bool = Field(description="the full-text index answers (FTS5 on SQLite, the tsvector on PostgreSQL)")


class ModelOut(Schema):
    id: str
    dim: int | None
    loaded: bool
    index_model: str | None
    error: str | None = None


class CountsOut(Schema):
    nodes: int
    by_tier: dict[str, int]
    by_type: dict[str, int]
    edges: int


class DriftOut(Schema):
    clean: bool
    not_indexed: list[str]
    missing_files: list[str]
    changed: list[str]
    malformed: list[MalformedOut]


class HealthOut(Schema):
    status: Literal["ok", "degraded"]
    extensions: ExtensionsOut
    model: ModelOut
    counts: CountsOut
    drift: DriftOut
