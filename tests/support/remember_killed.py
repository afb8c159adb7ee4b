"""Subprocess for crash tests of remember's one transaction (tests/memory/test_remember_one_commit.py).

`crash`: migrate a fresh home, remember one memory, then remember another and die (os._exit) when its evidence rows
are inserted: the events and the memory's file are on disk, its index transaction never commits.
`recover`: on the same home and database, what a restart and the next writes do: `ormah rebuild --incremental`
(index_sync, evidence_sync), then one more remember; prints what the files and the index hold as one JSON line.
"""

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
from memory.conf import get_conf  # noqa: E402
from memory.domain.evidence import decode_event  # noqa: E402
from memory.domain.markdown import parse  # noqa: E402
from memory.domain.requests import NodeCreate  # noqa: E402
from memory.models import EvidenceRow, NodeRow  # noqa: E402
from memory.services import evidence_sync, index_sync, node_remember  # noqa: E402


def _die_at_the_evidence_rows(execute, sql, params, many, context):
    if sql.lstrip().upper().startswith("INSERT") and EvidenceRow._meta.db_table in sql:
        print("KILLED", flush=True)
        os._exit(9)
    return execute(sql, params, many, context)


def _remember(text: str) -> None:
    node = node_remember(request=NodeCreate(content=text, source="agent:crash"), session_id="crash").node
    print(f"ACK {node.id}", flush=True)


if sys.argv[1] == "crash":
    call_command("migrate", interactive=False, verbosity=0)
    _remember("The kiln fires at dawn on Saturdays")
    with connection.execute_wrapper(_die_at_the_evidence_rows):
        _remember("Glaze batches dry for a whole day")
else:
    index_sync()
    evidence_sync()
    _remember("Clay arrives on Tuesdays by truck")
    files = {p.name: parse(p.read_text(), source=str(p)) for p in sorted(runtime.store().nodes_dir.glob("*.md"))}
    events = [decode_event(line).id for f in sorted(get_conf().evidence_dir.glob("*.jsonl"))
              for line in f.read_text().splitlines()]
    print(json.dumps({
        "files": {n.id: list(n.source_event_ids) for n in files.values()},
        "rows": sorted(NodeRow.objects.values_list("uid", flat=True)),
        "events": events,
        "event_rows": sorted(EvidenceRow.objects.values_list("uid", flat=True)),
    }), flush=True)
