"""Deciding proposals from the UI: the decision through maintenance's service, what the graph must redraw, and
how to undo it (ormah_site.ui.undo).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import HttpRequest

from maintenance.services.proposals import proposal_decide
from memory.errors import OrmahError
from ormah_site.ui import undo
from ormah_site.ui.view_models.review import ProposalView, proposal_view

VERBS = {"approve": "approved", "reject": "rejected"}


def graph_events(view: ProposalView | None) -> dict:
    """What an applied proposal changed, as the events graph.js listens for."""
    if view is None or view.status != "approved":
        return {}
    r = view.result
    if view.kind == "merge":
        return {"ormah:removed": {"ids": [r.get("removed")]}, "ormah:changed": {"ids": [r.get("kept")]}}
    if view.kind in ("link", "conflict"):
        return {"ormah:changed": {"ids": [r.get("source"), r.get("target")]}}
    if view.kind == "consolidation":
        return {"ormah:changed": {"ids": [n.uid for n in view.nodes] + [r.get("node_id")]}}
    return {"ormah:changed": {"ids": [n.uid for n in view.nodes]}}


@dataclass
class Decided:
    """The outcome of deciding a list of proposals."""

    action: str
    done: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    events: dict[str, dict] = field(default_factory=dict)
    undo_token: str | None = None

    @property
    def message(self) -> str:
        n = len(self.done)
        verb = VERBS.get(self.action, self.action)
        text = f"{n} proposal{'s' if n != 1 else ''} {verb}." if n else "Nothing was decided."
        return text


def _undo_steps(before: ProposalView, after: ProposalView, recorder: undo.Recorder) -> list[dict]:
    reopen = {"op": "reopen", "proposal_id": after.id}
    if after.status == "rejected":
        return [reopen]
    if after.kind == "merge" and after.result.get("merge_id"):
        return [{"op": "merge_undo", "merge_id": after.result["merge_id"]}, reopen]
    created = [{"op": "forget", "uid": after.result["node_id"]}] if after.result.get("node_id") else []
    return [*created, *recorder.steps(), reopen]


def decide(request: HttpRequest, *, ids: list[str], action: str) -> Decided:
    """Approve or reject each proposal in turn; failures are reported and the rest still decided.

    One undo entry covers the whole list (undone last decision first).
    """
    out = Decided(action=action)
    steps: list[list[dict]] = []
    for proposal_id in dict.fromkeys(ids):
        before = proposal_view(proposal_id=proposal_id)
        if before is None:
            out.errors.append(f"No proposal {proposal_id[:8]}")
            continue
        recorder = undo.Recorder()
        if action == "approve" and before.kind != "merge":
            recorder.watch([n.uid for n in before.nodes if n.exists])
        try:
            proposal_decide(proposal_id=proposal_id, action=action, decided_by=f"ui:{request.user.get_username()}")
        except OrmahError as exc:
            out.errors.append(exc.message)
            continue
        after = proposal_view(proposal_id=proposal_id)
        out.done.append(proposal_id)
        steps.append(_undo_steps(before, after, recorder))
        for name, detail in graph_events(after).items():
            out.events.setdefault(name, {"ids": []})["ids"].extend(i for i in detail["ids"] if i)
    label = f"{VERBS.get(action, action).capitalize()} {len(out.done)} proposal{'s' if len(out.done) != 1 else ''}"
    out.undo_token = undo.push(request, label=label, steps=[s for group in reversed(steps) for s in group],
                               ids=out.done)
    return out
