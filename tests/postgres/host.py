"""One app host in a child process: its own ORMAH_HOME, the shared PostgreSQL database of ORMAH_DATABASE_URL.

    python tests/postgres/host.py remember TEXT   -> prints the new memory's id
    python tests/postgres/host.py show ID         -> prints its content
    python tests/postgres/host.py recall QUERY    -> prints the ids of the hits, one a line
    python tests/postgres/host.py rebuild         -> `ormah rebuild` (a full rebuild through the write door)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")

import django  # noqa: E402

django.setup()

from memory import runtime  # noqa: E402
from memory.domain.requests import NodeCreate  # noqa: E402
from memory.domain.search import SearchQuery  # noqa: E402
from memory.search.pipeline import recall  # noqa: E402
from memory.selectors import node_get  # noqa: E402
from memory.services import index_sync, node_create  # noqa: E402

command, *args = sys.argv[1:]
if command == "remember":
    print(node_create(request=NodeCreate(content=args[0]), auto_link=False).node.id)
elif command == "show":
    print(node_get(store=runtime.store(), ref=args[0]).content)
elif command == "recall":
    print("\n".join(h.node_id for h in recall(query=SearchQuery(query=args[0]), warnings=False)))
elif command == "rebuild":
    index_sync(full=True)
else:
    sys.exit(f"unknown command {command}")
