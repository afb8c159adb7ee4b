"""The node panel (an HTMX partial, or a page of its own) and its actions, all written through memory.services."""

from __future__ import annotations

import functools

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from pydantic import ValidationError

from memory import services
from memory.cards import node_suggest
from memory.domain.enums import TIER_ORDER, EdgeType, Tier
from memory.errors import NodeForgotten, OrmahError
from ormah_site.ui import undo
from ormah_site.ui.forms import SYSTEM_TAGS, ConnectForm, NodeEditForm, OutdatedForm, TierForm
from ormah_site.ui.http import is_htmx, with_trigger
from ormah_site.ui.render import markdown_html
from ormah_site.ui.view_models.node_trust import node_trust
from ormah_site.ui.view_models.nodes import NodeDetail, connect_target, node_detail, node_on_disk

_TIER_VERBS = {Tier.CORE: "Promote to core", Tier.WORKING: "Move to working", Tier.ARCHIVAL: "Archive"}


def _tier_moves(detail: NodeDetail) -> list[tuple[str, str, bool]]:
    """(tier, button label, is_promotion) for every tier the memory is not in."""
    here = TIER_ORDER[detail.node.tier]
    return [(t.value, _TIER_VERBS[t], TIER_ORDER[t] > here) for t in (Tier.CORE, Tier.WORKING, Tier.ARCHIVAL)
            if t != detail.node.tier]


def _panel(request: HttpRequest, ref: str, *, status: int = 200, error: str | None = None,
           notice: str | None = None, edit_form: NodeEditForm | None = None,
           connect_form: ConnectForm | None = None, outdated_form: OutdatedForm | None = None,
           undo_token: str | None = None, target_options: tuple = (), on_disk=None) -> HttpResponse:
    detail = node_detail(ref=ref)
    context = {
        "d": detail, "node": detail.node, "content_html": markdown_html(detail.node.content),
        "tier_moves": [] if detail.is_self else _tier_moves(detail),
        "edit_form": edit_form, "connect_form": connect_form, "outdated_form": outdated_form or OutdatedForm(),
        "error": error, "notice": notice, "defines": EdgeType.DEFINES.value,
        "trust": node_trust(uid=detail.node.id), "undo_token": undo_token, "target_options": target_options,
        "on_disk": on_disk,
    }
    template = "memory/_node_panel.html" if is_htmx(request) else "memory/node_page.html"
    return render(request, template, context, status=status)


def _after_write(request: HttpRequest, uid: str, notice: str, *, also: list[str] | None = None,
                 recorder: undo.Recorder | None = None) -> HttpResponse:
    """The panel after a change, with an undo of it (what the recorder saw change) next to the notice."""
    token = undo.push(request, label=notice.rstrip("."), steps=recorder.steps()) if recorder else None
    if not is_htmx(request):
        messages.success(request, notice)
        return redirect("ui:node", uid=uid)
    return with_trigger(_panel(request, uid, notice=notice, undo_token=token), "ormah:changed",
                        {"ids": [uid, *(also or [])]})


def node_view(view):
    """login_required, plus: a memory that cannot be found (or an ambiguous id) gets the "missing" partial."""

    @functools.wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except OrmahError as exc:
            # A page visit (a bookmark, a reload after Forget) gets the site's page around the message.
            template = "memory/_node_missing.html" if is_htmx(request) else "memory/node_missing_page.html"
            forgotten = (exc.details or {}).get("forgotten") if isinstance(exc, NodeForgotten) else None
            return render(request, template, {"message": exc.message, "uid": kwargs.get("uid"),
                                              "forgotten": forgotten}, status=exc.http_status)

    return login_required(wrapper)


def _failed(request: HttpRequest, uid: str, exc: OrmahError) -> HttpResponse:
    if not is_htmx(request):
        messages.error(request, exc.message)
        return redirect("ui:node", uid=uid)
    return _panel(request, uid, status=exc.http_status, error=exc.message)


@node_view
@require_GET
def node_panel(request: HttpRequest, uid: str) -> HttpResponse:
    """The node panel: content, fields, tags, edges in and out, identity and audit history."""
    return _panel(request, uid)


@node_view
@require_http_methods(["GET", "POST"])
def node_edit(request: HttpRequest, uid: str) -> HttpResponse:
    """Edit a memory; the change is written to its markdown file by node_update."""
    detail = node_detail(ref=uid)
    if request.method == "GET":
        return _panel(request, uid, edit_form=NodeEditForm.for_node(detail.node, detail.file_hash))
    form = NodeEditForm(request.POST)
    form.system_tags = tuple(t for t in detail.node.tags if t in SYSTEM_TAGS)
    if not form.is_valid():
        return _panel(request, uid, status=422, edit_form=form)
    on_disk, disk_hash = node_on_disk(ref=uid)
    if form.cleaned_data["file_hash"] != disk_hash:
        # Keep the person's text and show the file as it is now; the form takes the new hash, so saving again,
        # having seen the change, writes the person's text (Undo brings the file's version back).
        data = request.POST.copy()
        data["file_hash"] = disk_hash
        form = NodeEditForm(data)
        form.system_tags = tuple(t for t in on_disk.tags if t in SYSTEM_TAGS)
        form.is_valid()
        form.add_error(None, "The file changed on disk while you were editing; it now says what is shown above "
                             "your text. Your text is kept below: merge what you need, then Save to file writes "
                             "it (Undo brings the file's version back).")
        return _panel(request, uid, status=409, edit_form=form, on_disk=on_disk)
    try:
        patch = form.patch_for(detail.node)
    except ValidationError:
        return _panel(request, uid, status=422, edit_form=form)
    recorder = undo.Recorder().watch([detail.node.id])
    try:
        services.node_update(ref=uid, patch=patch)
    except OrmahError as exc:
        form.add_error(None, exc.message)
        return _panel(request, uid, status=exc.http_status, edit_form=form)
    return _after_write(request, uid, "Saved to the markdown file." if patch.changes() else "Nothing changed.",
                        recorder=recorder)


@node_view
@require_http_methods(["GET", "POST"])
def node_connect(request: HttpRequest, uid: str) -> HttpResponse:
    """Connect the memory to another one (the edge is stored in this memory's file)."""
    if request.method == "GET":
        return _panel(request, uid, connect_form=ConnectForm())
    form = ConnectForm(request.POST)
    if not form.is_valid():
        return _panel(request, uid, status=422, connect_form=form)
    data = form.cleaned_data
    source = node_detail(ref=uid).node.id
    picked = (request.POST.get("target_id") or "").strip()
    match = connect_target(text=picked or data["target"], source_uid=source)
    if match.uid is None:
        form.add_error("target", match.message)
        return _panel(request, uid, status=422, connect_form=form, target_options=match.options)
    recorder = undo.Recorder().watch([uid])
    try:
        conn = services.edge_create(source_ref=uid, target_ref=match.uid, edge=EdgeType(data["edge"]),
                                    weight=data["weight"], reason=data["reason"].strip() or None)
    except OrmahError as exc:
        form.add_error("target", exc.message)
        return _panel(request, uid, status=exc.http_status, connect_form=form)
    return _after_write(request, uid, f"Connected ({conn.edge.value.replace('_', ' ')}).", also=[conn.target],
                        recorder=recorder)


@login_required
@require_GET
def node_suggestions(request: HttpRequest) -> HttpResponse:
    """<option>s for the connect form's datalist."""
    options = node_suggest(text=request.GET.get("target", ""), exclude=request.GET.get("exclude"))
    return render(request, "memory/_node_options.html", {"options": options})


@node_view
@require_POST
def node_outdated(request: HttpRequest, uid: str) -> HttpResponse:
    """Mark a memory outdated (valid_until = now, the reason appended to its content)."""
    form = OutdatedForm(request.POST)
    if not form.is_valid():  # refused, not done without the reason; the reason stays in its box, the error beside it
        return _panel(request, uid, status=422, outdated_form=form)
    reason = form.cleaned_data["reason"]
    recorder = undo.Recorder().watch([uid])
    try:
        services.node_mark_outdated(ref=uid, reason=reason or None)
    except OrmahError as exc:
        return _failed(request, uid, exc)
    return _after_write(request, uid, "Marked outdated.", recorder=recorder)


@node_view
@require_POST
def node_tier(request: HttpRequest, uid: str) -> HttpResponse:
    """Promote or demote a memory to another tier."""
    form = TierForm(request.POST)
    if not form.is_valid():
        return _panel(request, uid, status=422, error="Choose core, working or archival.")
    recorder = undo.Recorder().watch([uid])
    try:
        node = services.node_set_tier(ref=uid, tier=Tier(form.cleaned_data["tier"]))
    except OrmahError as exc:
        return _failed(request, uid, exc)
    return _after_write(request, uid, f"Moved to {node.tier.value}.", recorder=recorder)


@node_view
@require_POST
def node_forget(request: HttpRequest, uid: str) -> HttpResponse:
    """Forget a memory (its file moves to deleted/); the answer offers an undo."""
    try:
        node = services.node_forget(ref=uid)
    except OrmahError as exc:
        return _failed(request, uid, exc)
    context = {"node": node, "label": node.title or node.content[:60]}
    undo.push(request, label=f"Forgot {context['label']}", steps=[{"op": "restore", "uid": node.id}])
    if not is_htmx(request):
        messages.success(request, f"Forgotten: {context['label']}")
        return redirect(reverse("ui:graph"))
    response = render(request, "memory/_forgotten.html", context)
    return with_trigger(response, "ormah:removed", {"ids": [node.id]})


@node_view
@require_POST
def node_restore(request: HttpRequest, uid: str) -> HttpResponse:
    """Undo a forget: the file comes back from deleted/ and is indexed again."""
    try:
        node = services.node_restore(node_id=uid)
    except OrmahError as exc:
        if not is_htmx(request):
            messages.error(request, exc.message)
            return redirect(reverse("ui:graph"))
        raise
    return _after_write(request, node.id, "Restored.")
