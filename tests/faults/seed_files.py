"""Write N node files straight into ORMAH_HOME's memory folder (each connected to the one before), then index them
with a full rebuild. A subprocess of the rebuild fault test; run with the hash embedder (plumbing, no semantics).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")

import django  # noqa: E402

django.setup()

from memory import files, runtime  # noqa: E402
from memory.domain.node import new_node_id, utcnow  # noqa: E402
from memory.domain.requests import ConnectionIn, NodeCreate, build_node  # noqa: E402
from memory.services import index_sync  # noqa: E402

store = runtime.store()
now = utcnow()
previous = None
for i in range(int(sys.argv[1])):
    connections = [ConnectionIn(target=previous, edge="related_to", weight=0.5)] if previous else []
    request = NodeCreate(content=f"Seeded memory {i} about item {i * 7919 % 1000}", title=f"seeded {i}",
                         tags=[f"t{i % 5}"], connections=connections)
    node = build_node(request, node_id=new_node_id(), now=now)
    files.write_node(store, node, path=store.nodes_dir / f"fact_seeded-{i}_{node.short_id}.md")
    previous = node.id
index_sync(full=True)
print("SEEDED", flush=True)
