"""Scopes: where a memory, an event or a session state applies. Pure.

docs/trust.md maps them onto Ormah's spaces and sessions: global = memories without a space, user = memories about
the user (the self node's identity set), project:NAME = the space NAME (plus global memories), workspace:PATH = the
space of that folder plus memories made in it, session:ID = what that session's evidence produced.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ScopeType(StrEnum):
    """Where a memory or an event applies (docs/trust.md maps each onto spaces and sessions)."""

    GLOBAL = "global"
    USER = "user"
    WORKSPACE = "workspace"
    PROJECT = "project"
    SESSION = "session"


@dataclass(frozen=True, slots=True)
class Scope:
    """A scope: its type and a non-empty id (`global`/`user` take any id, by convention their own name)."""

    type: ScopeType
    id: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "type", ScopeType(self.type))
        if not isinstance(self.id, str) or not self.id.strip():
            raise ValueError("a scope id must be a non-empty string")

    @classmethod
    def parse(cls, text: str) -> Scope:
        """`project:ormah`, `session:abc`, `workspace:/home/me/repo`, `global`, `user`; raises ValueError."""
        kind, _, ident = text.strip().partition(":")
        if kind in (ScopeType.GLOBAL, ScopeType.USER) and not ident:
            ident = kind
        return cls(type=ScopeType(kind), id=ident.strip())

    def __str__(self) -> str:
        return f"{self.type.value}:{self.id}"


GLOBAL_SCOPE = Scope(ScopeType.GLOBAL, "global")
