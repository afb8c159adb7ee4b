"""Import a folder of markdown: Ormah node files keep their ids; plain notes become new memories."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import yaml
from pydantic import ValidationError

from memory import runtime
from memory.conf import get_conf
from memory.domain.markdown import parse
from memory.domain.requests import NodeCreate, validation_message
from memory.errors import MalformedNodeFile, OrmahError, ValidationFailed
from memory.models import NodeRow
from memory.services.locking import write_lock
from memory.services.nodes import _persist, node_create

logger = logging.getLogger(__name__)
_FRONT = re.compile(r"\A---\r?\n(.*?)\r?\n---\r?\n?(.*)\Z", re.S)
_HEADING = re.compile(r"^#{1,6}\s+(.+)$", re.M)


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"imported": len(self.imported), "skipped": [{"path": p, "reason": r} for p, r in self.skipped]}


def _plain_note(path: Path, text: str, space: str | None) -> NodeCreate:
    meta, body = {}, text
    match = _FRONT.match(text)
    if match:
        try:
            loaded = yaml.safe_load(match.group(1))
        except yaml.YAMLError:
            loaded = None
        if isinstance(loaded, dict):
            meta, body = loaded, match.group(2)
    heading = _HEADING.search(body)
    title = meta.get("title") or (heading.group(1).strip() if heading else path.stem.replace("-", " ").replace("_", " "))
    tags = meta.get("tags") or []
    if isinstance(tags, str):
        tags = [t for t in re.split(r"[,\s]+", tags) if t]
    created = datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    return NodeCreate(content=body, title=str(title)[:300], tags=[str(t) for t in tags][:50], space=space,
                      source=f"import:{path.name}"[:200], created=created)


def notes_import(*, folder: Path, space: str | None = None) -> ImportReport:
    """Import every *.md under `folder`; files that cannot be imported are reported and left untouched."""
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ValidationFailed(f"{folder} is not a folder")
    conf = get_conf()
    store = runtime.store(conf)
    report = ImportReport()
    for path in sorted(folder.rglob("*.md")):
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            report.skipped.append((str(path), f"unreadable: {exc}"))
            continue
        try:
            node = parse(text, source=str(path))
        except MalformedNodeFile:
            node = None
        try:
            if node is not None:
                if NodeRow.objects.filter(uid=node.id).exists():
                    report.skipped.append((str(path), f"memory {node.id} already exists"))
                    continue
                with write_lock(conf.lock_file):
                    _persist(store, node)
                report.imported.append(node.id)
            else:
                if not text.strip():
                    report.skipped.append((str(path), "empty file"))
                    continue
                report.imported.append(node_create(request=_plain_note(path, text, space), auto_link=False).node.id)
        except ValidationError as exc:
            report.skipped.append((str(path), validation_message(exc)))
        except OrmahError as exc:
            report.skipped.append((str(path), exc.message))
    return report
