from memory.management.base import OrmahCommand
from memory.services import node_forget, node_restore


class Command(OrmahCommand):
    help = "Forget a memory (soft delete: the file moves to deleted/ and can be restored with --restore)."

    def add_arguments(self, parser):
        parser.add_argument("node_id")
        parser.add_argument("--restore", action="store_true", help="bring a forgotten memory back (full id)")

    def handle(self, *args, **o):
        if o["restore"]:
            node = node_restore(node_id=o["node_id"])
            self.stdout.write(f"Restored {node.id}")
        else:
            node = node_forget(ref=o["node_id"])
            self.stdout.write(f"Forgot {node.id} (restore with: ormah forget --restore {node.id})")
