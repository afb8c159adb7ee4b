import json
import sys

from memory.domain.requests import NodeCreate, auto_title
from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.services import node_remember


class Command(OrmahCommand):
    help = ("Remember something: writes a markdown file citing an explicit_memory evidence event, and indexes it. "
            "Use '-' to read the content from stdin.")

    def add_arguments(self, parser):
        parser.add_argument("content")
        parser.add_argument("--title")
        parser.add_argument("--type", default="fact")
        parser.add_argument("--tier", default="working")
        parser.add_argument("--space")
        parser.add_argument("--tags", default="", help="comma-separated")
        parser.add_argument("--about-self", action="store_true")
        parser.add_argument("--confidence", type=float, default=1.0)
        parser.add_argument("--source", default="cli")
        parser.add_argument("--session", help="the session this memory comes from (its evidence event's session)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        content = sys.stdin.read().removeprefix("\ufeff") if o["content"] == "-" else o["content"]  # a file's BOM
        request = NodeCreate(
            content=content, title=o["title"], type=o["type"], tier=o["tier"], space=o["space"],
            tags=[t for t in o["tags"].split(",") if t.strip()], about_self=o["about_self"],
            confidence=o["confidence"], source=o["source"],
        )
        result = node_remember(request=request, session_id=o["session"])
        node = result.node
        if o["json"]:
            self.stdout.write(json.dumps({"id": node.id, "auto_links": [l.__dict__ for l in result.auto_links]}))
            return
        self.stdout.write(f"Remembered [{node.type}]: {node.title or auto_title(node.content)}\nID: {node.id}")
        if result.auto_links:
            self.stdout.write(f"Auto-linked to {counted(len(result.auto_links), 'related memory')}:")
            for link in result.auto_links:
                self.stdout.write(f"  -> {link.title} ({link.similarity:.0%} similar)")
