from memory.management.base import OrmahCommand
from memory.services import node_mark_outdated


class Command(OrmahCommand):
    help = "Mark a memory as outdated (valid until now); search skips it unless asked for history."

    def add_arguments(self, parser):
        parser.add_argument("node_id")
        parser.add_argument("--reason")

    def handle(self, *args, **o):
        node = node_mark_outdated(ref=o["node_id"], reason=o["reason"])
        self.stdout.write(f"Marked {node.id} outdated")
