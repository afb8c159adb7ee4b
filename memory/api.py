"""REST routes of the memory app: the agent-facing surface and admin operations."""

from __future__ import annotations

from ninja import Router

agent_router = Router(tags=["agent"])
admin_router = Router(tags=["admin"])
