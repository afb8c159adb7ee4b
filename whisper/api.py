"""REST routes of the whisper app."""

from __future__ import annotations

from ninja import Router

router = Router(tags=["whisper"])
