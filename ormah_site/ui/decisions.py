"""Deciding proposals from the UI: the decision through maintenance's service, what the graph must redraw, and
how to undo it (ormah_site.ui.undo).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.http import HttpRequest

from maintenance.errors import ProposalChanged
from maintenance.services.proposals import ACTIONS, SINGLE_PREFIX, ResultEdit, proposal_decide, proposal_group_decide
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
    stale: list[str] = field(default_factory=list)  # expired: a memory changed since it was proposed
    errors: list[str] = field(default_factory=list)
    events: dict[str, dict] = field(default_factory=dict)
    undo_token: str | None = None
    edited: bool = False  # approved with the person's text (edit before approving)

    @property
    def message(self) -> str:
        n = len(self.done)
        verb = VERBS.get(self.action, self.action) + (" with your changes" if self.edited else "")
        text = f"{n} proposal{'s' if n != 1 else ''} {verb}." if n else "Nothing was decided."
        if self.stale:
            k = len(self.stale)
            text += (f" {k} expired instead: a memory {'it was' if k == 1 else 'they were'} made from changed since; "
                     "the next sleep cycle looks at it again.")
        return text


def _undo_steps(decided: list[ProposalView], recorder: undo.Recorder) -> list[dict]:
    """How to undo one decision on these proposals: merges undone newest first, memories a consolidation created
    forgotten, every other memory put back to its text before the decision, then the proposals reopened."""
    merges = [{"op": "merge_undo", "merge_id": v.result["merge_id"], "proposal_id": v.id} for v in reversed(decided)
              if v.status == "approved" and v.kind == "merge" and v.result.get("merge_id")]
    created = [{"op": "forget", "uid": v.result["node_id"]} for v in reversed(decided)
               if v.status == "approved" and v.result.get("node_id")]
    return [*merges, *created, *recorder.steps(), *({"op": "reopen", "proposal_id": v.id} for v in decided)]


def decide(request: HttpRequest, *, ids: list[str], action: str) -> Decided:
    """Approve or reject the proposals of a card: one group decision (proposal_group_decide) per group among
    them, limited to the proposals shown; stale and failed ones are reported and the rest still decided.

    One undo entry covers the whole decision.
    """
    out = Decided(action=action)
    if ACTIONS.get((action or "").strip().lower()) is None:
        out.errors.append("action must be approve or reject")
        return out
    groups: dict[str, list[str]] = {}
    recorder = undo.Recorder()
    for proposal_id in dict.fromkeys(ids):
        before = proposal_view(proposal_id=proposal_id)
        if before is None:
            out.errors.append(f"No proposal {proposal_id[:8]}")
        elif before.status != "pending":
            out.errors.append(f"Proposal {proposal_id[:8]} is already {before.status}")
        else:
            groups.setdefault(before.group_key or f"{SINGLE_PREFIX}{proposal_id}", []).append(proposal_id)
            if action == "approve" and before.kind != "merge":
                recorder.watch([n.uid for n in before.nodes if n.exists])
    for group_key, members in groups.items():
        try:
            outcome = proposal_group_decide(group_key=group_key, action=action, proposal_ids=members,
                                            decided_by=f"ui:{request.user.get_username()}")
        except OrmahError as exc:  # every member was decided elsewhere since the page was drawn
            out.errors.append(exc.message)
            continue
        out.done.extend(outcome.decided)
        out.stale.extend(outcome.stale)
        out.errors.extend(outcome.failed.values())
    return _finish(request, out, recorder)


def decide_edited(request: HttpRequest, *, proposal_id: str, edit: ResultEdit, seen: dict[str, str]) -> Decided:
    """Approve one merge or consolidation proposal with the person's title, content and tags (edit before
    approving); one undo entry reverts it, as for an approval.

    Raises ProposalChanged when a memory it reads changed on disk since the form was drawn (nothing applied, the
    proposal still pending); any other refusal is in the outcome's errors.
    """
    out = Decided(action="approve", edited=True)
    before = proposal_view(proposal_id=proposal_id)
    recorder = undo.Recorder()
    if before is not None and before.kind != "merge":
        recorder.watch([n.uid for n in before.nodes if n.exists])
    try:
        proposal_decide(proposal_id=proposal_id, action="approve", edit=edit, seen=seen,
                        decided_by=f"ui:{request.user.get_username()}")
    except ProposalChanged:
        raise
    except OrmahError as exc:
        out.errors.append(exc.message)
        return out
    out.done.append(proposal_id)
    return _finish(request, out, recorder)


def _finish(request: HttpRequest, out: Decided, recorder: undo.Recorder) -> Decided:
    """The graph events and the one undo entry of the proposals a decision decided."""
    action = out.action
    decided = [v for v in (proposal_view(proposal_id=i) for i in out.done) if v is not None]
    for view in decided:
        for name, detail in graph_events(view).items():
            out.events.setdefault(name, {"ids": []})["ids"].extend(i for i in detail["ids"] if i)
    if decided:
        label = f"{VERBS.get(action, action).capitalize()} {len(decided)} proposal{'s' if len(decided) != 1 else ''}"
        out.undo_token = undo.push(request, label=label, steps=_undo_steps(decided, recorder), ids=out.done)
    return out
