"""The whisper screen: recent prompts and decisions, what was injected and why, and feedback buttons.

Feedback goes through whisper.services.feedback.feedback_submit (explicit feedback, in the decision's context).
"""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from memory.domain.node import utcnow
from memory.errors import OrmahError
from ormah_site.ui.http import is_htmx
from ormah_site.ui.view_models.whisper import decision_one, decision_outcomes, decisions_recent
from whisper.services.feedback import feedback_submit

OUTCOMES = ("all", "injected", "silent")
PAGE = 40


@login_required
@require_GET
def whisper_page(request: HttpRequest) -> HttpResponse:
    """Recent whisper decisions with their candidates and scores, newest first."""
    outcome = request.GET.get("outcome", "all")
    outcome = outcome if outcome in OUTCOMES else "all"
    session = (request.GET.get("session") or "").strip() or None
    before = request.GET.get("before")
    decisions = decisions_recent(outcome=outcome, session_id=session, limit=PAGE,
                                 before_id=int(before) if before and before.isdigit() else None)
    return render(request, "whisper/decisions.html", {
        "decisions": decisions, "outcome": outcome, "outcomes": OUTCOMES, "session": session or "",
        "totals": decision_outcomes(since=utcnow() - timedelta(days=7)),
        "older": decisions[-1].id if len(decisions) == PAGE else None,
    })


@login_required
@require_POST
def whisper_feedback(request: HttpRequest, decision_id: int) -> HttpResponse:
    """Mark a candidate of a decision useful (+1) or not (-1); answers with the candidate's feedback cell."""
    node_id = request.POST.get("node_id", "")
    signal = 1 if request.POST.get("signal") == "1" else -1
    error = None
    try:
        feedback_submit(node_ref=node_id, signal=signal, source="explicit", whisper_log_id=decision_id)
    except OrmahError as exc:
        error = exc.message
    if not is_htmx(request):
        return redirect("ui:whisper")
    decision = decision_one(decision_id=decision_id)
    candidate = next((c for c in decision.candidates if c.node_uid == node_id), None) if decision else None
    return render(request, "whisper/_feedback.html", {"d": decision, "c": candidate, "error": error},
                  status=200 if error is None else 422)
