"""A person edits a node file by hand while two API writers PATCH the same node: no hand version is ever lost.

The hand editor rewrites a front-matter key (`hand_edit: N`) of the live file at least 150 times, alternating an
in-place rewrite and a temp file + rename, as editors do. Before each edit it reads the file: the key must still
say its previous N (an API write that read the hand version keeps the key, since unknown keys are kept). A file
that shows an older N means an API write replaced the hand version without having read it: that hand version
must then be in memory/conflicts/. At the end the last hand version is the live file or in conflicts/.
"""

from __future__ import annotations

import os
import re
import threading
import time

import pytest

from tests.faults.support import Api

pytestmark = [pytest.mark.faults, pytest.mark.slow]

HAND_EDITS = 160
KEY = re.compile(r"^hand_edit: (\d+)$", re.M)


def _hand_value(text: str) -> int | None:
    match = KEY.search(text)
    return int(match.group(1)) if match else None


def _with_hand_value(text: str, n: int) -> str:
    if KEY.search(text):
        return KEY.sub(f"hand_edit: {n}", text, count=1)
    head, sep, rest = text.partition("\n---\n")
    return f"{head}\nhand_edit: {n}{sep}{rest}"


def _live_file(nodes, short: str):
    return next(p for p in nodes.iterdir() if p.name.endswith(f"_{short}.md"))


def test_no_hand_edit_is_lost_to_concurrent_api_writes(fault_home, serve):
    server = serve(fault_home)
    api = Api(server.port, server.token)
    status, body = api.call("POST", "/api/agent/remember", {"content": "The kiln fires at dawn", "source": "agent:t"})
    assert status == 201, body
    node_id = body["node"]["id"]
    nodes, conflicts = fault_home / "memory" / "nodes", fault_home / "memory" / "conflicts"
    path = _live_file(nodes, node_id[:8])

    stop = threading.Event()
    statuses: dict[int | None, int] = {}

    def writer(index: int) -> None:
        n = 0
        while not stop.is_set():
            n += 1
            try:
                status, _ = api.call("PATCH", f"/api/agent/nodes/{node_id}", {"content": f"API {index}-{n}"})
            except OSError:
                status = None
            statuses[status] = statuses.get(status, 0) + 1

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(2)]
    for t in threads:
        t.start()

    versions: dict[int, str] = {}
    clobbered: list[int] = []
    # At least HAND_EDITS edits, and on until the API writers have had 20 writes accepted (a loaded machine
    # serves fewer PATCHes per second; the race needs both sides), within a generous bound.
    deadline = time.monotonic() + 300
    n = 0
    while n < HAND_EDITS or (statuses.get(200, 0) < 20 and time.monotonic() < deadline):
        n += 1
        text = path.read_text(encoding="utf-8")
        if n > 1 and _hand_value(text) != n - 1:
            clobbered.append(n - 1)
        new = _with_hand_value(text, n)
        versions[n] = new
        if n % 2:
            path.write_text(new, encoding="utf-8")
        else:
            tmp = path.with_name(f".hand-{n}.tmp")
            tmp.write_text(new, encoding="utf-8")
            os.replace(tmp, path)
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=60)

    saved = {p.read_text(encoding="utf-8") for p in conflicts.glob("*.md")} if conflicts.is_dir() else set()
    lost = [k for k in clobbered if versions[k] not in saved]
    final = path.read_text(encoding="utf-8")
    assert statuses.get(200, 0) >= 20, statuses
    assert lost == [], f"{len(lost)} of {n} hand edits lost; statuses {statuses}"
    assert final == versions[n] or _hand_value(final) == n or versions[n] in saved
