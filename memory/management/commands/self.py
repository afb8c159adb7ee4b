import json

from django.core.management.base import CommandError

from memory import runtime
from memory.domain.wording import counted
from memory.management.base import OrmahCommand, node_text
from memory.schemas import SelfOut
from memory.selectors import self_get


class Command(OrmahCommand):
    help = "Show the self node and the memories that define the user."

    def add_arguments(self, parser):
        parser.add_argument("--space", help="keep identity memories of this project and global ones")
        parser.add_argument("--limit", type=int, default=50)
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        if o["limit"] < 1:
            raise CommandError("--limit must be at least 1")
        node, defined = self_get(store=runtime.store(), space=o["space"], limit=o["limit"])
        if o["json"]:
            self.stdout.write(SelfOut.model_validate({"node": node, "defines": defined}).model_dump_json())
            return
        self.stdout.write(node_text(node))
        self.stdout.write(f"\nDefined by {counted(len(defined), 'memory')}:" if defined else "\nNo identity memories yet.")
        for row in defined:
            self.stdout.write(f"  [{row.type}] {row.title or row.content[:60]}  ({row.short_id}, {row.tier})")
