"""REST routes of the memory app: the agent-facing surface and admin operations.

Routes call services (writes) and selectors (reads) and shape the answer; errors are raised as OrmahError and
mapped to the one error shape in ormah_site.api. Recall never counts as use; reading one memory by id does.
"""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace
from typing import Literal

from django.db import OperationalError
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Status
from ninja.responses import NinjaJSONEncoder

from memory import runtime
from memory.domain.search import SearchHit
from memory.errors import MalformedNodeFile, NodeNotFound, StorageError, ValidationFailed
from memory.node_list import nodes_page
from memory.schemas import (
    BatchIn,
    BatchOut,
    ConnectIn,
    ConnectOut,
    ErrorOut,
    HealthOut,
    NodeDetailOut,
    NodeIn,
    NodeListOut,
    NodeListQuery,
    NodeOut,
    NodePatch,
    OutdatedIn,
    RebuildOut,
    RecallIn,
    RecallOut,
    RecallTextOut,
    RememberOut,
    SelfOut,
    SelfQuery,
    SNIPPET_CHARS,
)
from memory.malformed import node_read_error
from memory.search import format_hits_text
from memory.search import recall as search_recall
from memory.selectors import (
    batch_connection_problems,
    health_report,
    node_get,
    node_identical,
    node_neighbours,
    node_row_get,
    self_get,
)
from memory.services import (
    edge_create,
    index_sync,
    node_confirm_use,
    node_forget,
    node_mark_outdated,
    node_restore,
    node_update,
)
from memory.services.evidence import node_remember, nodes_remember
from memory.services.surfacing import surfacing_log
from memory.writes import exclusive

logger = logging.getLogger(__name__)

agent_router = Router(tags=["agent"])
admin_router = Router(tags=["admin"])

RECALL_SURFACE = "recall"
JSON_CONTENT_TYPE = "application/json; charset=utf-8"  # ninja's JSONRenderer's, as every route of the API answers


def _answers(ok: dict | type, *codes: int) -> dict:
    """The success schema(s) plus the error shape for the given statuses (400, 401 and 422 always)."""
    success = ok if isinstance(ok, dict) else {200: ok}
    return {**success, **{code: ErrorOut for code in {400, 401, 422, *codes}}}


# ---------------------------------------------------------------------------
# Remember
# ---------------------------------------------------------------------------

@agent_router.post("/remember", response=_answers({201: RememberOut, 200: RememberOut}, 413),
                   summary="Remember one memory")
def remember(request: HttpRequest, payload: NodeIn, if_exists: Literal["create", "return"] = "create"):
    """Write a markdown file, index it, auto-link it to similar memories (and to the self node if about_self).

    An explicit_memory evidence event is appended first and the memory cites it (`source_event_ids`).
    `if_exists=return`: when a live memory in the same space already holds exactly this content, answer 200 with
    it (`existing: true`) and write nothing (what the MCP tool does, so an agent never stores a fact twice).
    """
    if if_exists == "return":
        # The check and the write under one hold of the write lock: agents remembering the same text at once store
        # one memory (review7; each used to find nothing and write its own copy). Such a write runs alone, outside
        # the group commit (memory.group_commit runs a caller holding the lock by itself).
        with exclusive():
            same = node_identical(content=payload.content, space=payload.space)
            if same is not None:
                return Status(200, _existing(node_get(store=runtime.store(), ref=same.uid)))
            return Status(201, node_remember(request=payload.to_create(), session_id=payload.session_id))
    return Status(201, node_remember(request=payload.to_create(), session_id=payload.session_id))


def _existing(node) -> SimpleNamespace:
    """The answer for a remember that found its content already stored (if_exists=return): nothing was written."""
    return SimpleNamespace(node=node, auto_links=[], existing=True)


@agent_router.post("/remember/batch", response=_answers({201: BatchOut, 200: BatchOut}, 413),
                   summary="Remember up to 1,000")
def remember_batch(request: HttpRequest, payload: BatchIn, if_exists: Literal["create", "return"] = "create"):
    """All items are validated (fields and connection targets) before the first is written; results keep order.

    `if_exists=return` means per item what it means for one remember: an item whose content a live memory of its
    space already holds (stored before, or an earlier item of this batch) answers with that memory
    (`existing: true`) and writes nothing, its connection targets unchecked. 201 when the batch wrote a memory,
    200 when every item already existed.
    """
    if if_exists == "return":
        with exclusive():  # the checks and the writes as one step, as for one remember
            return _remember_batch(payload, if_exists)
    return _remember_batch(payload, if_exists)


def _remember_batch(payload: BatchIn, if_exists: str):
    items = payload.nodes
    stored: dict[int, str] = {}  # item index -> the id of the live memory that already holds its content
    first: dict[int, int] = {}  # item index -> the earlier item of this batch with the same content and space
    if if_exists == "return":
        seen: dict[tuple[str, str | None], int] = {}
        for i, item in enumerate(items):
            key = (item.content, item.space)
            if key in seen:
                first[i] = seen[key]
            elif (row := node_identical(content=item.content, space=item.space)) is not None:
                stored[i] = row.uid
            else:
                seen[key] = i
    fresh = [i for i in range(len(items)) if i not in stored and i not in first]
    checked = [item.model_copy(update={"connections": []}) if i in stored or i in first else item
               for i, item in enumerate(items)]
    problems = batch_connection_problems(requests=checked)
    if problems:
        raise ValidationFailed(f"{problems[0]['loc']}: {problems[0]['msg']}", details=problems)
    created = dict(zip(fresh, nodes_remember(items=[(items[i].to_create(), items[i].session_id) for i in fresh])
                             if fresh else []))
    results = []
    for i in range(len(items)):
        if i in created:
            results.append(created[i])
        elif i in stored:
            results.append(_existing(node_get(store=runtime.store(), ref=stored[i])))
        else:
            results.append(_existing(created[first[i]].node))
    return Status(201 if created else 200, {"results": results})


# ---------------------------------------------------------------------------
# Recall (search: never confirmed use)
# ---------------------------------------------------------------------------

@agent_router.post("/recall", response=_answers(RecallOut | RecallTextOut), summary="Search memories")
def recall(request: HttpRequest, payload: RecallIn):
    """Hybrid search; the hits are logged as surfaced (for feedback) but do not reinforce the memories."""
    query = payload.to_query()
    hits = search_recall(query=query)
    try:
        surfacing_id = surfacing_log(surface=RECALL_SURFACE, query=query, hits=hits, session_id=payload.session_id)
    except OperationalError as exc:
        # Trigger: the index refuses the ledger row (disk full, read-only, locked). Why: a read must not fail because
        # its ledger write did. Outcome: the hits without a surfacing_id (feedback then has no event to name).
        logger.warning("Recall answered without its surfacing record: %s", exc)
        surfacing_id = None
    if payload.format == "text":
        return _rendered({"text": format_hits_text(hits), "surfacing_id": surfacing_id})
    return _rendered({"results": [hit_out(h, full=payload.full) for h in hits], "surfacing_id": surfacing_id})


def hit_out(hit: SearchHit, *, full: bool) -> dict:
    """A hit as HitOut dumps it (its fields, in its order), the content cut to a snippet (SNIPPET_CHARS) unless the
    full content was asked for. Built from recall's own frozen hits, which need no second validation."""
    truncated = not full and len(hit.content) > SNIPPET_CHARS
    return {
        "id": hit.node_id, "short_id": hit.short_id, "title": hit.title,
        "content": hit.content[:SNIPPET_CHARS].rstrip() + "…" if truncated else hit.content,
        "type": hit.type, "tier": hit.tier, "space": hit.space, "tags": list(hit.tags), "created": hit.created,
        "valid_until": hit.valid_until, "score": float(hit.score), "legs": list(hit.legs), "source": hit.source,
        "activated_by": hit.activated_by, "activation_edge": hit.activation_edge,
        "warnings": [{"kind": w.kind, "item_id": w.item_id, "message": w.message, "related_id": w.related_id}
                     for w in hit.warnings],
        "content_truncated": truncated,
    }


def _rendered(body: dict) -> HttpResponse:
    """A 200 answer rendered as ninja renders one (its JSON encoder and content type) from a body already in the
    route's response schema: ninja's output validation (an attribute getter per field of every hit) is skipped; the
    schema stays the route's in the OpenAPI document (tests/api/test_recall_response.py holds both to ninja's)."""
    return HttpResponse(json.dumps(body, cls=NinjaJSONEncoder), content_type=JSON_CONTENT_TYPE)


# ---------------------------------------------------------------------------
# Listing (newest first, cursor pages)
# ---------------------------------------------------------------------------

def _listed(row, *, full: bool) -> dict:
    long = len(row.content) > SNIPPET_CHARS
    content = row.content if full or not long else row.content[:SNIPPET_CHARS].rstrip() + "…"
    return {"id": row.uid, "short_id": row.short_id, "title": row.title, "content": content,
            "content_truncated": long and not full, "type": row.type, "tier": row.tier, "space": row.space,
            "tags": row.tags_text.split(), "importance": row.importance, "created": row.created,
            "updated": row.updated, "valid_until": row.valid_until}


def _csv(value: str | None) -> list[str] | None:
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    return items or None


@agent_router.get("/nodes", response=_answers(NodeListOut), summary="List memories, newest first")
def node_list(request: HttpRequest, filters: Query[NodeListQuery]):
    """Memories filtered by type, tier, space and tags, newest first by `order`, `limit` per page; follow
    `next_cursor` for the next page. Content is a snippet unless `full=true`. Listing never counts as use."""
    spaces = _csv(filters.spaces)
    page = nodes_page(types=_csv(filters.types), tiers=_csv(filters.tiers),
                      spaces=[None if s == "global" else s for s in spaces] if spaces else None,
                      tags=_csv(filters.tags), include_outdated=filters.include_outdated, order=filters.order,
                      limit=filters.limit, cursor=filters.cursor)
    return {"results": [_listed(row, full=filters.full) for row in page.rows], "next_cursor": page.next_cursor}


# ---------------------------------------------------------------------------
# One memory
# ---------------------------------------------------------------------------

def _detail(node) -> dict:
    neighbours = node_neighbours(row=node_row_get(ref=node.id))
    return {"node": node,
            "edges_out": [n for n in neighbours if n.direction == "out"],
            "edges_in": [n for n in neighbours if n.direction == "in"]}


@agent_router.get("/nodes/{node_id}", response=_answers(NodeDetailOut, 404, 409), summary="Recall one memory")
def node_detail(request: HttpRequest, node_id: str, use: bool = True):
    """The memory (id or unique prefix) with its edges in and out. Counts as confirmed use unless `use=false`
    (a person looking at it, as `ormah show` does)."""
    if not use:
        return _detail(node_get(store=runtime.store(), ref=node_id))
    try:
        return _detail(node_confirm_use(ref=node_id, source="recall_node"))
    except (NodeNotFound, MalformedNodeFile) as exc:
        raise node_read_error(store=runtime.store(), ref=node_id, error=exc) from None
    except (StorageError, OperationalError) as exc:
        # Trigger: the use cannot be written (a full or read-only disk). Why: the person asked to read the memory, and
        # it is there. Outcome: the memory as it is, its use not recorded (logged).
        logger.warning("Recall by id answered without recording the use: %s", exc)
        return _detail(node_get(store=runtime.store(), ref=node_id))


@agent_router.patch("/nodes/{node_id}", response=_answers(NodeOut, 404, 409, 413), summary="Update a memory")
def node_patch(request: HttpRequest, node_id: str, payload: NodePatch):
    """Change only the fields given; a request that changes nothing writes nothing."""
    return node_update(ref=node_id, patch=payload)


@agent_router.delete("/nodes/{node_id}", response=_answers(NodeOut, 404, 409), summary="Forget a memory")
def node_delete(request: HttpRequest, node_id: str):
    """Soft delete: the file moves to deleted/ and can be restored. The self node is protected (409)."""
    return node_forget(ref=node_id)


@agent_router.post("/nodes/{node_id}/restore", response=_answers(NodeOut, 404, 409), summary="Restore a memory")
def node_restore_route(request: HttpRequest, node_id: str):
    """Bring a forgotten memory back (full id) with its connections."""
    return node_restore(node_id=node_id.strip().lower())


@agent_router.post("/nodes/{node_id}/outdated", response=_answers(NodeOut, 404, 409), summary="Mark outdated")
def node_outdated(request: HttpRequest, node_id: str, payload: OutdatedIn | None = None):
    """Set valid_until to now and append the reason; recall then skips it unless asked for history."""
    return node_mark_outdated(ref=node_id, reason=payload.reason if payload else None)


@agent_router.post("/connect", response=_answers(ConnectOut, 404, 409), summary="Connect two memories")
def connect(request: HttpRequest, payload: ConnectIn):
    """A typed, weighted edge stored in the source memory's file (same source, target and type: replaced)."""
    try:
        source = node_row_get(ref=payload.source_id).uid
    except NodeNotFound as exc:  # a malformed source file answers as a read of it does (422 malformed_file)
        raise node_read_error(store=runtime.store(), ref=payload.source_id, error=exc) from None
    conn = edge_create(source_ref=source, target_ref=payload.target_id, edge=payload.edge, weight=payload.weight,
                       reason=payload.reason)
    return {"source_id": source, "target_id": conn.target, "edge": conn.edge, "weight": conn.weight,
            "reason": conn.reason}


# ---------------------------------------------------------------------------
# Identity
# ---------------------------------------------------------------------------

@agent_router.get("/self", response=_answers(SelfOut, 404), summary="Who the user is")
def get_self(request: HttpRequest, filters: Query[SelfQuery]):
    """The self node and the memories it defines (identity), most important first."""
    node, defined = self_get(store=runtime.store(), space=filters.space, limit=filters.limit)
    return {"node": node, "defines": defined}


# ---------------------------------------------------------------------------
# Admin
# ---------------------------------------------------------------------------

@admin_router.post("/rebuild", response=_answers(RebuildOut), summary="Rebuild the index from the files")
def rebuild(request: HttpRequest):
    """Re-read every markdown file into a fresh index (embeddings come from the cache when unchanged)."""
    return {"status": "rebuilt", "report": index_sync(full=True).as_dict()}


@admin_router.get("/health", response=_answers(HealthOut), summary="Health: extensions, model, counts, drift")
def health(request: HttpRequest):
    """Whether the index, the model and the files agree; `status` is "degraded" when anything is off."""
    return health_report(store=runtime.store())
