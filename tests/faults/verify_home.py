"""After a crash, with no server running: parse every file, heal with `ormah doctor --heal`, snapshot the index,
rebuild it from the files, snapshot again, run `ormah doctor --json`; print one JSON report on the last line.

Run as a subprocess with ORMAH_HOME set (tests/faults/support.py:verify).
"""

import io
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from memory import runtime  # noqa: E402
from memory.domain.markdown import parse  # noqa: E402
from memory.models import EdgeRow, MergeHistoryRow, NodeRow, NodeTagRow  # noqa: E402
from memory.services import index_sync  # noqa: E402


def doctor(*args: str) -> dict:
    out = io.StringIO()
    try:
        call_command("doctor", "--json", *args, stdout=out)
    except SystemExit:
        pass
    return json.loads(out.getvalue().strip().splitlines()[-1])


def snapshot() -> dict:
    with connection.cursor() as cur:  # PostgreSQL's full text is the rows' generated tsvector (memory/backends)
        cur.execute("SELECT count(*) FROM memory_noderow WHERE fts IS NOT NULL" if connection.vendor == "postgresql"
                    else "SELECT count(*) FROM node_fts")
        fts = cur.fetchone()[0]
        cur.execute("SELECT count(*) FROM node_vec")
        vec = cur.fetchone()[0]
    nodes = {r.uid: {"content": r.content, "title": r.title, "tier": r.tier, "space": r.space,
                     "file_path": r.file_path, "file_hash": r.file_hash}
             for r in NodeRow.objects.all()}
    edges = sorted([s, t, e] for s, t, e in EdgeRow.objects.values_list("source__uid", "target__uid", "edge_type"))
    tags = sorted([u, t] for u, t in NodeTagRow.objects.values_list("node__uid", "tag"))
    return {"nodes": nodes, "edges": edges, "tags": tags, "fts_rows": fts, "vec_rows": vec}


store = runtime.store()
unparsable, ids = [], {}
for folder in ("nodes", "deleted", "conflicts"):
    for path in sorted((store.root / folder).glob("*.md")):
        try:
            node = parse(path.read_text(encoding="utf-8"), source=str(path))
        except Exception as exc:  # noqa: BLE001 - any failure to read back is what this report is for
            unparsable.append(f"{path}: {exc}")
            continue
        if folder != "conflicts":
            ids.setdefault(folder, []).append(node.id)
temp_files = sorted(str(p.relative_to(store.root)) for p in store.root.rglob(".ormah_*.tmp"))

before_heal = doctor()
healed_doctor = doctor("--heal")
healed = snapshot()
merges = [{"kept": k, "removed": r} for k, r in MergeHistoryRow.objects.values_list("kept_uid", "removed_uid")]
index_sync(full=True, verify=True)  # trusts no hash: the healed index is compared with one built from scratch
rebuilt = snapshot()
after = doctor()

print(json.dumps({
    "unparsable": unparsable, "temp_files": temp_files, "live_files": ids.get("nodes", []),
    "tombstones": ids.get("deleted", []), "doctor_before_heal": before_heal, "doctor_heal": healed_doctor,
    "healed": healed, "rebuilt": rebuilt, "doctor_after": after, "merges": merges,
}))
