import json

from memory import runtime
from memory.domain.markdown import render
from memory.management.base import OrmahCommand, node_text
from memory.selectors import node_get


class Command(OrmahCommand):
    help = "Show one memory by id or unique id prefix."

    def add_arguments(self, parser):
        parser.add_argument("node_id")
        parser.add_argument("--markdown", action="store_true", help="print the file as stored")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        node = node_get(store=runtime.store(), ref=o["node_id"])
        if o["markdown"]:
            self.stdout.write(render(node), ending="")
        elif o["json"]:
            self.stdout.write(json.dumps({"id": node.id, "type": str(node.type), "tier": str(node.tier),
                                          "title": node.title, "content": node.content, "space": node.space,
                                          "tags": list(node.tags)}))
        else:
            self.stdout.write(node_text(node))
