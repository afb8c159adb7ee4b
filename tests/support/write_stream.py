"""Subprocess for crash tests: migrate a fresh home, then remember forever, printing each acknowledged id."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from memory.domain.requests import NodeCreate  # noqa: E402
from memory.services import node_create, node_update  # noqa: E402
from memory.domain.requests import NodePatch  # noqa: E402

call_command("migrate", interactive=False, verbosity=0)
print("READY", flush=True)
i = 0
while True:
    i += 1
    node = node_create(request=NodeCreate(content=f"Crash test memory number {i} about topic {i % 7}",
                                          title=f"memory {i}", tags=[f"t{i % 3}"]))
    if i % 3 == 0:
        node = node_update(ref=node.id, patch=NodePatch(content=f"Crash test memory number {i}, revised"))
    print(f"ACK {node.id} {i}", flush=True)
