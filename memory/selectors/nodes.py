"""Reads of memories: resolve ids and prefixes (merges followed), load nodes from their files, the self node and
what it defines, neighbours."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from django.db import connection
from django.db.models import Q

from memory import documents, runtime
from memory.domain.markdown import parse
from memory.domain.node import Node
from memory.errors import (AmbiguousNodeRef, MalformedNodeFile, NodeForgotten, NodeMerged, NodeNotFound,
                           ValidationFailed)
from memory.malformed import malformed_self, node_read_error
from memory.models import EdgeRow, MergeHistoryRow, NodeRow, NodeTagRow
from memory.store import MAX_READ_BYTES, MarkdownStore, StoredFile, content_hash

MIN_PREFIX = 4
MAX_MERGE_HOPS = 16  # a chain of merges (A into B, B into C) is followed this far at most


def node_row_get(*, ref: str) -> NodeRow:
    """The index row for a full id or a unique id prefix (at least 4 characters).

    Raises NodeNotFound (NodeMerged, naming the keeper, when a merge removed that memory), or AmbiguousNodeRef
    listing the candidates.
    """
    ref = (ref or "").strip().lower()
    if len(ref) < MIN_PREFIX or not all(c in "0123456789abcdef-" for c in ref):
        raise ValidationFailed(f"'{ref}' is not a node id or an id prefix of at least {MIN_PREFIX} hex characters")
    row = row_by_uid(ref)
    if row is not None:
        return row
    matches = list(NodeRow.objects.filter(uid__startswith=ref).order_by("uid")[:11])
    if not matches:
        _raise_if_merged(ref)
        _raise_if_forgotten(ref)
        raise NodeNotFound(f"No memory with id {ref}")
    if len(matches) > 1:
        ids = [m.uid for m in matches[:10]]
        raise AmbiguousNodeRef(f"Id prefix {ref} matches {len(matches)}+ memories; use more characters",
                               details={"candidates": ids})
    return matches[0]


def deleted_id_get(*, store: MarkdownStore, ref: str) -> str:
    """The full id of a forgotten memory, from its id or a unique id prefix (at least 4 characters) among the
    tombstones in deleted/, as every other id is resolved. Raises NodeNotFound (also for what is no id or prefix:
    a restore of one never reached a file), or AmbiguousNodeRef listing the candidates."""
    ref = (ref or "").strip().lower()
    if len(ref) == 36:
        return ref  # a full id: the restore finds its tombstone by name, without reading every other one
    valid = len(ref) >= MIN_PREFIX and all(c in "0123456789abcdef-" for c in ref)
    matches = store.deleted_ids(ref) if valid else []
    if ref in matches or len(matches) == 1:
        return ref if ref in matches else matches[0]
    if not matches:
        raise NodeNotFound(f"No deleted memory {ref}")
    raise AmbiguousNodeRef(f"Id prefix {ref} matches {len(matches)} deleted memories; use more characters",
                           details={"candidates": matches[:10]})


def row_by_uid(uid: str) -> NodeRow | None:
    """The index row with exactly this id, or None: the model instance `filter(uid=...).first()` gives (the fields'
    converters applied), read by a plain statement, as the ORM spent ~3 times the read's cost building its query
    (every API read and feedback of a memory starts here; docs/benchmarks.md, "Soak session 18")."""
    return next(iter(NodeRow.objects.raw(f"SELECT * FROM {NodeRow._meta.db_table} WHERE uid = %s", [uid])), None)


def node_row_resolve(*, ref: str) -> tuple[NodeRow, str | None]:
    """The row a write about the content lands on, and the id the caller gave when a merge moved it (else None).

    For whisper feedback: a memory a duplicate merge removed (and no undo brought back) resolves to its keeper,
    following merges in a chain. Reads and edits use node_row_get, which answers NodeMerged instead. Raises
    NodeNotFound (NodeMerged when the keeper is gone as well), AmbiguousNodeRef, ValidationFailed.
    """
    try:
        return node_row_get(ref=ref), None
    except NodeMerged as exc:
        keeper = NodeRow.objects.filter(uid=exc.merged_into).first() if exc.details["keeper_live"] else None
        if keeper is None:
            raise
        return keeper, exc.details["removed"]


def _raise_if_forgotten(ref: str) -> None:
    """Raise NodeForgotten when `ref` (an id or prefix no live memory has) names exactly one forgotten memory: a
    bare "No memory with id" left a person who forgot it by mistake at a dead end (tombstone ids are cached by
    file signature, and this runs only on a miss)."""
    forgotten = runtime.store().deleted_ids(ref)
    if len(forgotten) == 1:
        raise NodeForgotten(f"No memory with id {ref}: it was forgotten; `ormah forget --restore {ref}` brings it "
                            "back", details={"forgotten": forgotten[0]})


def _raise_if_merged(ref: str) -> None:
    """Raise NodeMerged when `ref` (an id or prefix no live memory has) names a memory a merge removed."""
    removed = list(MergeHistoryRow.objects.filter(removed_uid__startswith=ref, undone_at__isnull=True)
                   .order_by("removed_uid").values_list("removed_uid", flat=True).distinct()[:11])
    if not removed:
        return
    if len(removed) > 1:
        raise AmbiguousNodeRef(f"Id prefix {ref} matches {len(removed)}+ merged memories; use more characters",
                               details={"candidates": removed[:10]})
    first, chain, seen = None, [], {removed[0]}
    uid, live = removed[0], False
    for _ in range(MAX_MERGE_HOPS):
        merge = MergeHistoryRow.objects.filter(removed_uid=uid, undone_at__isnull=True) \
            .order_by("-merged_at", "-id").first()
        if merge is None or merge.kept_uid in seen:
            break
        first = first or merge
        uid = merge.kept_uid
        chain.append(uid)
        seen.add(uid)
        live = NodeRow.objects.filter(uid=uid).exists()
        if live:
            break
    if first is None:
        return
    when = first.merged_at.date().isoformat()
    message = f"Memory {removed[0]} was merged into {uid} on {when}"
    if not live:
        message += f"; {uid} no longer exists"
    raise NodeMerged(message, details={"removed": removed[0], "merged_into": uid,
                                       "merged_at": first.merged_at.isoformat(), "merge_id": first.merge_id,
                                       "chain": chain, "keeper_live": live})


def node_identical(*, content: str, space: str | None) -> NodeRow | None:
    """A live memory of this space holding exactly this content (the oldest), or None.

    Every remember asks this first: a plain statement through `Model.objects.raw` (the instance the ORM's
    `filter(...).order_by("created", "uid").first()` gave), as in `row_by_uid`."""
    where, params = ("space = %s", [content, space]) if space is not None else ("space IS NULL", [content])
    rows = NodeRow.objects.raw(f"SELECT * FROM {NodeRow._meta.db_table} WHERE content = %s AND valid_until IS NULL "
                               f"AND {where} ORDER BY created, uid LIMIT 1", params)
    return next(iter(rows), None)


@dataclass(frozen=True)
class LinkTarget:
    """The columns of an indexed memory that remember's auto-links read (memory.services.links)."""

    uid: str
    is_self: bool
    space: str | None
    title: str
    content: str


def link_targets(*, row_ids: Collection[int]) -> dict[int, LinkTarget]:
    """The rows of `row_ids` still indexed, by row id: one plain statement per 500 ids reading five columns (the
    ORM's `in_bulk` built whole NodeRow instances, ~0.6 ms of a remember for its 7-15 candidates)."""
    ids = sorted(row_ids)
    out: dict[int, LinkTarget] = {}
    with connection.cursor() as cur:
        for at in range(0, len(ids), 500):
            chunk = ids[at:at + 500]
            cur.execute(f"SELECT id, uid, is_self, space, title, content FROM {NodeRow._meta.db_table} "
                        f"WHERE id IN ({', '.join(['%s'] * len(chunk))})", chunk)
            for row_id, uid, is_self, space, title, content in cur.fetchall():
                out[row_id] = LinkTarget(uid=uid, is_self=bool(is_self), space=space, title=title, content=content)
    return out


def node_read(*, store: MarkdownStore, row: NodeRow) -> tuple[Node, StoredFile]:
    """The node as its file says now (the truth), with the file's hash.

    On PostgreSQL, when this host's file is missing or an older stored version (another host wrote the memory since
    this host's last write unit), the node comes from the documents store, which holds what the row was indexed
    from. A local file that no version holds is a hand edit on this host and is read as on SQLite.
    """
    path = store.root / row.file_path
    try:
        found = store.read(path)
    except FileNotFoundError:
        found = None
    if (found is None or found[1].hash != row.file_hash) and \
            (shared := _shared_read(store, row, None if found is None else found[1].hash)) is not None:
        return shared
    if found is None:
        raise NodeNotFound(f"The file of memory {row.uid} is gone: {path}")
    return found


def _shared_read(store: MarkdownStore, row: NodeRow, local_hash: str | None) -> tuple[Node, StoredFile] | None:
    """The row's document from the documents store when it holds what the row was indexed from and this host's
    file is missing or one of its older versions; None otherwise (and always on SQLite)."""
    if not documents.enabled():
        return None
    doc = documents.document_get(path=row.file_path)
    if doc is None or doc.sha256 != row.file_hash or len(doc.body) > MAX_READ_BYTES:
        return None
    if local_hash is not None and local_hash not in documents.hashes_of(path=row.file_path):
        return None
    try:
        node = parse(doc.body.decode("utf-8"), source=row.file_path)
    except (UnicodeDecodeError, MalformedNodeFile):
        return None
    return node, StoredFile(path=store.root / row.file_path, hash=doc.sha256, mtime_ns=doc.mtime_ns,
                            size=len(doc.body))


def node_get(*, store: MarkdownStore, ref: str) -> Node:
    """The node for an id or unique prefix, read from its markdown file.

    Raises NodeNotFound (NodeMerged), AmbiguousNodeRef, ValidationFailed, and MalformedNodeFile when the memory's
    file is malformed, whether the index still holds its row or a sync has dropped it (node_read_error).
    """
    try:
        return node_read(store=store, row=node_row_get(ref=ref))[0]
    except (NodeNotFound, MalformedNodeFile) as exc:
        raise node_read_error(store=store, ref=ref, error=exc) from None


@dataclass(frozen=True)
class FileSnapshot:
    """A memory's file as it is now: its text and hash (what an undo puts back, see services.revert)."""

    uid: str
    text: str
    hash: str


def node_snapshot(*, store: MarkdownStore, ref: str) -> FileSnapshot:
    """The current text and hash of a memory's file; raises NodeNotFound, AmbiguousNodeRef."""
    row = node_row_get(ref=ref)
    _, stored = node_read(store=store, row=row)
    doc = documents.document_get(path=row.file_path) if documents.enabled() else None
    data = doc.body if doc is not None and doc.sha256 == stored.hash else stored.path.read_bytes()
    return FileSnapshot(uid=row.uid, text=data.decode("utf-8"), hash=content_hash(data))


_NODES, _EDGES, _TAGS = NodeRow._meta.db_table, EdgeRow._meta.db_table, NodeTagRow._meta.db_table
# The self node's id (the oldest, should there be several), found through the `self` tag's index: every self node
# holds that tag (memory.domain.identity.is_self_node) and the indexer writes a tag row for each tag, so this is the
# set `is_self` names, without the scan of the node table that column (no index) costs.
_SELF_ID = (f"SELECT u.id FROM {_NODES} u INNER JOIN {_TAGS} t ON u.id = t.node_id WHERE u.is_self = %s "
            "AND t.tag = %s ORDER BY u.created ASC, u.uid ASC LIMIT 1")


def self_row() -> NodeRow | None:
    """The self node's row (the oldest, should there be several); plain SQL through `NodeRow.objects.raw`, as
    `row_by_uid`."""
    return next(iter(NodeRow.objects.raw(f"SELECT * FROM {_NODES} WHERE id IN ({_SELF_ID})", [True, "self"])), None)


def self_defined_rows(*, limit: int = 100, me: NodeRow | None = None) -> list[NodeRow]:
    """Memories the self node defines (identity), most important first; one statement (the self node read in it),
    or, given `me` (the self row the caller read), one statement without that lookup."""
    source, params = ("= %s", [me.id]) if me is not None else (f"IN ({_SELF_ID})", [True, "self"])
    return list(NodeRow.objects.raw(
        f"SELECT * FROM {_NODES} WHERE id IN (SELECT e.target_id FROM {_EDGES} e WHERE e.edge_type = %s "
        f"AND e.source_id {source}) ORDER BY importance DESC, updated DESC LIMIT %s", ["defines", *params, limit]))


@dataclass(frozen=True)
class Neighbour:
    row: NodeRow
    edge_type: str
    weight: float
    reason: str | None
    direction: str  # "out" | "in"


def node_neighbours(*, row: NodeRow) -> list[Neighbour]:
    """Edges in and out of a node with the rows at their other ends."""
    out = [Neighbour(e.target, e.edge_type, e.weight, e.reason, "out")
           for e in EdgeRow.objects.filter(source=row).select_related("target")]
    inn = [Neighbour(e.source, e.edge_type, e.weight, e.reason, "in")
           for e in EdgeRow.objects.filter(target=row).select_related("source")]
    return out + inn


def rows_search_by_title(*, text: str, limit: int = 20) -> list[NodeRow]:
    """Plain substring lookup over titles and content (admin and CLI convenience, not recall)."""
    return list(NodeRow.objects.filter(Q(title__icontains=text) | Q(content__icontains=text))[:limit])


def batch_connection_problems(*, requests: list) -> list[dict]:
    """Connections in a batch of NodeCreate requests whose targets do not resolve, as [{loc, msg}] by index."""
    problems = []
    for i, request in enumerate(requests):
        for j, conn in enumerate(request.connections):
            try:
                node_row_get(ref=conn.target)
            except (NodeNotFound, AmbiguousNodeRef, ValidationFailed) as exc:
                problems.append({"loc": f"nodes.{i}.connections.{j}.target", "msg": exc.message})
    return problems


def self_get(*, store: MarkdownStore, space: str | None = None, limit: int = 50) -> tuple[Node, list[NodeRow]]:
    """The self node (from its file) and the memories it defines, keeping only `space` and global ones if given.

    Raises NodeNotFound when there is no self node yet, MalformedNodeFile when its file is malformed.
    """
    row = self_row()
    if row is None:
        raise malformed_self(store=store) or NodeNotFound("There is no self node yet; run `ormah init`")
    defined = self_defined_rows(limit=max(limit, 100) if space else limit, me=row)
    if space:
        defined = [r for r in defined if r.space in (None, "", space)]
    return node_read(store=store, row=row)[0], defined[:limit]
