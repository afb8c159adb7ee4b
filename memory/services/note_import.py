"""Import a folder of plain markdown notes (an Obsidian vault, a docs folder) as memories.

- Front matter is kept: `title`, `type` (mapped to a node type where the note says one), `tier`, `tags`,
  `aliases`, `created`/`date` and `updated`/`modified`; every other key is preserved in the memory's file.
- `[[wikilinks]]` (with `|label`, `#heading`) and relative `.md` links become `related_to` edges, resolved by
  path, file name, title or alias; the ones that name no note are reported.
- A note whose content is already a memory (in this import or before) is skipped as a duplicate.
- Each memory remembers the file it came from (workspace folder and relative path, docs/trust.md): importing the
  folder again updates the memory of an edited note in place and leaves unchanged ones alone.
- Everything is written in one unit of work through the write door and indexed at the end in one sync (long
  notes are split into passages by the index), with progress reported as it goes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.lifecycle import with_creation_importance
from memory.domain.node import RESERVED_KEYS, Connection, Node, new_node_id, utcnow, with_connection
from memory.domain.requests import NodeCreate, build_node, validation_message
from memory.errors import OrmahError
from memory.models import NodeRow
from memory.store import StoredFile, content_hash
from memory.writes import write_unit

Progress = Callable[[int, int], None]
_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.M)
_WIKILINK = re.compile(r"(!?)\[\[([^\]\|#\n]*)(?:#[^\]\|\n]*)?(?:\|[^\]\n]*)?\]\]")
_CODE = re.compile(r"^(```|~~~).*?^\1[^\n]*$|`[^`\n]+`", re.M | re.S)
_MDLINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+?\.md)(?:#[^)\s]*)?\)", re.I)
KNOWN_KEYS = {"title", "type", "kind", "category", "tier", "tags", "tag", "aliases", "alias", "created", "date",
              "created_at", "updated", "modified", "updated_at"}
TYPE_WORDS = {
    "note": NodeType.FACT, "reference": NodeType.FACT, "doc": NodeType.FACT, "adr": NodeType.DECISION,
    "idea": NodeType.CONCEPT, "topic": NodeType.CONCEPT, "howto": NodeType.PROCEDURE, "how-to": NodeType.PROCEDURE,
    "guide": NodeType.PROCEDURE, "runbook": NodeType.PROCEDURE, "recipe": NodeType.PROCEDURE,
    "meeting": NodeType.EVENT, "journal": NodeType.EVENT, "daily": NodeType.EVENT, "log": NodeType.EVENT,
    "todo": NodeType.GOAL, "task": NodeType.GOAL, "people": NodeType.PERSON, "contact": NodeType.PERSON,
}
LINK_WEIGHT = 0.5
LINK_REASON = "linked in the note"


@dataclass
class VaultReport:
    imported: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    links: int = 0
    unresolved: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class _Note:
    path: Path
    rel: str
    request: NodeCreate
    extra: dict[str, Any]
    aliases: list[str]
    targets: list[str]
    node_id: str = ""


def _text_list(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [t for t in re.split(r"[,\s]+", value) if t]
    if isinstance(value, list):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, date):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            return _when(datetime.fromisoformat(value.strip()))
        except ValueError:
            return None
    return None


def _plain(value: Any) -> Any:
    """A front-matter value as YAML/JSON-safe data (dates as ISO text)."""
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def node_type_of(meta: dict) -> NodeType:
    """The node type the note declares (`type`, `kind` or `category`), else fact."""
    for key in ("type", "kind", "category"):
        word = str(meta.get(key) or "").strip().lower()
        if word in NodeType._value2member_map_:
            return NodeType(word)
        if word in TYPE_WORDS:
            return TYPE_WORDS[word]
    return NodeType.FACT


def link_targets(body: str) -> list[str]:
    """Targets of `[[wikilinks]]` (not `![[embeds]]` of non-notes) and relative `.md` links, in order; what sits
    in code (fenced blocks, inline spans) is text, not a link."""
    body = _CODE.sub(" ", body)
    found = []
    for bang, target in _WIKILINK.findall(body):
        target = target.strip()
        if target and not (bang and "." in target.rsplit("/", 1)[-1] and not target.endswith(".md")):
            found.append(target)
    found += [t for t in _MDLINK.findall(body) if "://" not in t and not t.startswith("mailto:")]
    return list(dict.fromkeys(found))


def read_note(path: Path, folder: Path, text: str, space: str | None) -> _Note:
    """The note as a create request plus what the request cannot carry; raises ValidationError."""
    meta, body = {}, text
    match = _FRONT.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            meta, body = loaded, match.group(2)
    rel = path.resolve().relative_to(folder).as_posix()
    heading = _HEADING.search(body)
    title = meta.get("title") or (heading.group(1).strip() if heading else path.stem.replace("-", " ").replace("_", " "))
    tier = str(meta.get("tier") or "").lower()
    created = _when(meta.get("created") or meta.get("date") or meta.get("created_at"))
    request = NodeCreate(
        content=body, title=str(title)[:300], type=node_type_of(meta),
        tier=Tier(tier) if tier in Tier._value2member_map_ else Tier.WORKING,
        tags=_text_list(meta.get("tags", meta.get("tag")))[:50], space=space, source=f"import:{rel}"[:200],
        created=created or datetime.fromtimestamp(path.stat().st_mtime, tz=UTC),
        workspace_path=str(folder), file_path=rel, content_sha256=content_hash(text.encode("utf-8")),
    )
    aliases = _text_list(meta.get("aliases", meta.get("alias")))
    extra = {(k if k not in RESERVED_KEYS else f"note_{k}"): _plain(v) for k, v in meta.items()
             if str(k) not in KNOWN_KEYS}
    if aliases:
        extra["aliases"] = aliases
    if _when(meta.get("updated") or meta.get("modified") or meta.get("updated_at")):
        extra["note_updated"] = _plain(meta.get("updated") or meta.get("modified") or meta.get("updated_at"))
    return _Note(path=path, rel=rel, request=request, extra=extra, aliases=aliases, targets=link_targets(body))


def _previous(folder: Path) -> dict[str, str]:
    """Relative path -> memory id of notes imported from this folder before (their recorded provenance)."""
    found = {}
    for uid, trust in NodeRow.objects.filter(trust_json__contains=json.dumps(str(folder))[1:-1]).values_list(
            "uid", "trust_json"):
        try:
            data = json.loads(trust)
        except ValueError:
            continue
        if data.get("workspace_path") == str(folder) and data.get("file_path"):
            found[data["file_path"]] = uid
    return found


def _resolver(notes: list[_Note]) -> Callable[[_Note, str], str | None]:
    keys: dict[str, str] = {}
    for note in notes:
        stem = note.rel[:-3] if note.rel.lower().endswith(".md") else note.rel
        for key in (stem, stem.rsplit("/", 1)[-1], note.request.title or "", *note.aliases):
            keys.setdefault(key.strip().lower(), note.node_id)

    def resolve(source: _Note, target: str) -> str | None:
        name = target[:-3] if target.lower().endswith(".md") else target
        if "/" in name or name.startswith("."):  # a relative link: from the note's own folder
            base = Path(source.rel).parent
            parts: list[str] = []
            for part in (base / name).as_posix().split("/"):
                if part == "..":
                    parts = parts[:-1]
                elif part not in ("", "."):
                    parts.append(part)
            hit = keys.get("/".join(parts).lower())
            if hit:
                return hit
        return keys.get(name.strip().lower()) or keys.get(name.rsplit("/", 1)[-1].strip().lower())

    return resolve


def _with_links(node: Node, targets: list[str]) -> Node:
    kept = tuple(c for c in node.connections if c.reason != LINK_REASON)
    node = replace(node, connections=kept)
    for target in targets:
        if target != node.id:
            node = with_connection(node, Connection(target=target, edge=EdgeType.RELATED_TO, weight=LINK_WEIGHT,
                                                    reason=LINK_REASON))
    return node


def vault_import(*, folder: Path, paths: list[tuple[Path, str]], space: str | None,
                 progress: Progress | None = None) -> VaultReport:
    """Import the plain notes `paths` ((path, text) under `folder`): new ones created, edited ones updated."""
    folder = folder.resolve()
    report, notes, seen = VaultReport(), [], {}
    existing_content = set(NodeRow.objects.filter(content__in=[t for _, t in paths]).values_list("content",
                                                                                              flat=True))
    previous = _previous(folder)
    for path, text in paths:
        try:
            note = read_note(path, folder, text, space)
        except ValidationError as exc:
            report.skipped.append((str(path), validation_message(exc)))
            continue
        digest = content_hash(note.request.content.encode("utf-8"))
        if digest in seen:
            report.duplicates.append((str(path), f"same content as {seen[digest]}"))
            continue
        seen[digest] = note.rel
        note.node_id = previous.get(note.rel) or ""
        if not note.node_id and note.request.content in existing_content:
            report.duplicates.append((str(path), "its content is already a memory"))
            continue
        note.node_id = note.node_id or new_node_id()
        notes.append(note)
    resolve = _resolver(notes)
    links: list[list[str]] = []
    for note in notes:
        links.append([])
        for target in note.targets:
            found = resolve(note, target)
            if found:
                links[-1].append(found)
            else:
                report.unresolved.append((note.rel, target))
    linked_from = _linked_from(notes, links)
    now = utcnow()
    written: dict[str, tuple[Node, StoredFile]] = {}
    skipped: set[str] = set()
    with write_unit() as unit:
        for done, (note, targets) in enumerate(zip(notes, links), 1):
            try:
                saved = _save(unit, note, targets, now=now, report=report, update=note.rel in previous,
                              linked_from=linked_from[note.node_id])
            except OrmahError as exc:
                if exc.http_status >= 500:
                    raise
                report.skipped.append((str(note.path), exc.message))
                skipped.add(note.node_id)
            else:
                report.links += len(targets)
                if saved is not None:
                    written[note.node_id] = saved
            if progress:
                progress(done, len(notes))
        if skipped:  # a skipped note's links were counted above: count the saved notes' alone
            kept = [(n, t) for n, t in zip(notes, links) if n.node_id not in skipped]
            _recount(unit, written, skipped, _linked_from([n for n, _ in kept], [t for _, t in kept]))
    return report


def _linked_from(notes: list[_Note], links: list[list[str]]) -> Counter[str]:
    """How many of `notes` link to each id (one edge per linking note)."""
    return Counter(t for note, targets in zip(notes, links) for t in set(targets) if t != note.node_id)


def _recount(unit, written: dict[str, tuple[Node, StoredFile]], skipped: set[str], linked_from: Counter[str]) -> None:
    """The new notes' importance once the `skipped` notes are known: their links to a new note never reach it, and
    a link to a skipped note with no live file stays dangling (a note never written, or a memory whose file went
    missing: the import's sync drops its row even though the index still holds it now), so neither counts in the
    degree importance_scorer will see. A file is written again only when its value moves. One index query finds
    the notes never written; the store is asked (`path_for`, which may read every file's id) only for a skipped
    note that has an index row and that a written note links to."""
    linked = skipped & {c.target for node, _ in written.values() for c in node.connections}
    indexed = set(NodeRow.objects.filter(uid__in=linked).values_list("uid", flat=True)) if linked else set()
    missing = (linked - indexed) | {uid for uid in indexed if unit.store.path_for(uid) is None}
    for node, stored in written.values():
        out = len({(c.target, c.edge) for c in node.connections if c.target not in missing})
        fixed = with_creation_importance(node, out + linked_from[node.id])
        if fixed != node:
            unit.save(fixed, expected=stored, index=False)


def _save(unit, note: _Note, targets: list[str], *, now: datetime, report: VaultReport, update: bool,
          linked_from: int) -> tuple[Node, StoredFile] | None:
    """`linked_from`: how many notes of this import link to this one (its incoming edges). Returns a new note's
    node and file as written (None for an update)."""
    fresh = build_node(note.request, node_id=note.node_id, now=now)
    fresh = replace(fresh, extra={k: v for k, v in note.extra.items()})
    fresh = _with_links(fresh, targets)
    if not update:
        # the importance importance_scorer would give it once indexed: its links out and in, no access yet
        fresh = with_creation_importance(fresh, len(fresh.connections) + linked_from)
        stored = unit.save(fresh, fresh=True, index=False)
        report.imported.append(note.node_id)
        return fresh, stored
    old, stored = unit.read(note.node_id)
    new = replace(old, content=fresh.content, title=fresh.title, type=fresh.type, tags=fresh.tags,
                  extra=fresh.extra, provenance=fresh.provenance)
    new = _with_links(new, targets)
    if new == old:
        report.unchanged += 1
        return None
    unit.save(replace(new, updated=now), expected=stored, index=False)
    report.updated.append(note.node_id)
    return None
