"""The context router: gather candidates by policy, attach warnings, pack them under the budget (docs/trust.md).

| policy    | core blocks | active session state | memory search (facts) | workspace resources | evidence search |
|-----------|-------------|----------------------|-----------------------|---------------------|-----------------|
| auto      | yes         | yes                  | yes                   | yes                 | yes (last)      |
| task      | yes         | yes                  | no                    | no                  | no              |
| workspace | yes         | no                   | no                    | yes                 | no              |

A resource is a memory bound to a file (it has `file_path` provenance); a fact is any other recalled memory.
Nothing is dropped for its warnings; the same store, query and `now` always give the same pack.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from memory.context.selectors import (
    about_self_uids,
    active_session_states,
    core_blocks,
    evidence_rows,
    known_events,
    scope_spaces,
    session_uids,
    trust_facts,
    verification_warnings,
)
from memory.context.warnings import memory_warnings
from memory.context.workspace import workspace_state
from memory.domain.node import as_utc, utcnow
from memory.domain.packing import POLICY_KINDS, ContextPack, PackCandidate, PackKind, pack
from memory.domain.requests import auto_title
from memory.domain.scopes import Scope, ScopeType
from memory.domain.search import SearchHit, SearchQuery
from memory.domain.trust import WorkspaceState, citation_warnings
from memory.domain.trust_requests import ContextPackIn
from memory.embeddings import Embedder
from memory.search import recall
from memory.search.evidence import evidence_search
from memory.spaces import git_toplevel, space_detect

# Conversation and tool evidence; session-state and explicit-memory events already reach the pack as what they made.
EVIDENCE_KINDS = ("user_message", "assistant_message", "tool_call", "tool_result", "file_edit")
SEARCH_LIMIT = 30
EVIDENCE_LIMIT = 10
PINNED_BONUS = 1000.0


@dataclass(frozen=True)
class _Route:
    scope: Scope | None
    workspace: WorkspaceState | None
    spaces: list[str | None] | None
    default_space: str | None
    session_id: str | None


def _route(request: ContextPackIn) -> _Route:
    scope = request.scope.to_scope() if request.scope is not None else None
    path = request.workspace.path if request.workspace is not None else (
        scope.id if scope is not None and scope.type == ScopeType.WORKSPACE and scope.id.startswith("/") else None)
    workspace = ws_space = None
    if path:
        given = request.workspace
        workspace = workspace_state(path=path, branch=given.branch if given else None,
                                    commit=given.commit if given else None)
        folder = Path(path)
        ws_space = space_detect(configured=None, cwd=folder, home=Path.home(), git_root=git_toplevel(folder))
    default = request.default_space or (scope.id if scope is not None and scope.type == ScopeType.PROJECT else None)
    session = request.session_id or (scope.id if scope is not None and scope.type == ScopeType.SESSION else None)
    return _Route(scope=scope, workspace=workspace, spaces=scope_spaces(scope, workspace_space=ws_space),
                  default_space=default or ws_space, session_id=session)


def _memory_text(title: str | None, content: str) -> str:
    content = " ".join(content.split())
    if not title or title == auto_title(content):
        return content
    return f"{title}: {content}"


def _search(query: str, route: _Route, now: datetime, embedder: Embedder | None) -> list[SearchHit]:
    if not query.strip():
        return []
    user = route.scope is not None and route.scope.type == ScopeType.USER
    hits = recall(query=SearchQuery(query=query, limit=SEARCH_LIMIT, spaces=route.spaces,
                                    default_space=route.default_space, tags=["about_self"] if user else None),
                  now=now, embedder=embedder)
    if route.scope is not None and route.scope.type == ScopeType.SESSION:
        allowed = session_uids(session_id=route.scope.id)
        hits = [h for h in hits if h.node_id in allowed]
    elif user:
        allowed = about_self_uids()
        hits = [h for h in hits if h.node_id in allowed]
    return hits


def context_pack_build(*, request: ContextPackIn, now: datetime | None = None,
                       embedder: Embedder | None = None) -> ContextPack:
    """A bounded, cited pack for an agent under `request.budget_tokens`, by `request.policy`."""
    now = as_utc(now or utcnow())
    route = _route(request)
    kinds = POLICY_KINDS[request.policy]
    memories: list[tuple[PackKind, str, str, float, str]] = []  # (kind, uid, text, score, label)
    for row in core_blocks(spaces=route.spaces, now=now):
        score = row.authority + row.importance + (PINNED_BONUS if row.pinned else 0.0)
        memories.append((PackKind.CORE, row.uid, _memory_text(row.title, row.content), score, ""))
    if PackKind.FACT in kinds or PackKind.RESOURCE in kinds:
        hits = _search(request.query, route, now, embedder)
        facts = trust_facts(uids=[h.node_id for h in hits])
        for hit in hits:
            bound = hit.node_id in facts and facts[hit.node_id].provenance.file_path
            kind = PackKind.RESOURCE if bound else PackKind.FACT
            text = _memory_text(hit.title, hit.content)
            if bound:
                text = f"{facts[hit.node_id].provenance.file_path}: {text}"
            memories.append((kind, hit.node_id, text, hit.score, "" if bound else str(hit.type)))
    memories = [m for m in memories if m[0] in kinds]
    uids = [uid for _, uid, _, _, _ in memories]
    warned = memory_warnings(uids=uids, now=now, workspace=route.workspace)
    cited = trust_facts(uids=uids)
    states = active_session_states(session_id=route.session_id, scope=route.scope) \
        if PackKind.SESSION in kinds else []
    checks = verification_warnings(ids=uids + [s.session_id for s in states])
    candidates = [PackCandidate(
        kind=kind, id=uid, text=text, score=score, citations=cited[uid].citations if uid in cited else (),
        recall_warnings=warned.get(uid, ()), verification_warnings=(checks[uid],) if uid in checks else (),
        label=label,
    ) for kind, uid, text, score, label in memories]
    known = known_events(ids=[e for s in states for e in s.source_event_ids])
    for state in states:
        text = " | ".join(p for p in (f"session {state.session_id} ({state.status})", state.current_goal,
                                      state.summary, ", ".join(state.working_set)) if p)
        candidates.append(PackCandidate(
            kind=PackKind.SESSION, id=state.session_id, text=text, score=1.0,
            citations=tuple(state.source_event_ids),
            recall_warnings=tuple(citation_warnings(state.session_id, state.source_event_ids, known)),
            verification_warnings=(checks[state.session_id],) if state.session_id in checks else (),
        ))
    if PackKind.EVIDENCE in kinds and request.query.strip():
        found = evidence_search(request.query, EVIDENCE_LIMIT, session_id=route.session_id, kinds=EVIDENCE_KINDS)
        rows = evidence_rows(uids=[h.uid for h in found])
        for hit in found:
            row = rows[hit.uid]
            candidates.append(PackCandidate(
                kind=PackKind.EVIDENCE, id=row.uid, text=f"{row.kind} {row.at:%Y-%m-%d %H:%M}: {row.text}",
                score=round(1.0 / hit.rank, 4), citations=(row.uid,),
            ))
    return pack(candidates, budget_tokens=request.budget_tokens, policy=request.policy, query=request.query)
