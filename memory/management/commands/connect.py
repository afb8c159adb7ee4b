from memory.domain.enums import EdgeType
from memory.management.base import OrmahCommand
from memory.services import edge_create


class Command(OrmahCommand):
    help = "Connect two memories with a typed edge (stored in the source memory's file)."

    def add_arguments(self, parser):
        parser.add_argument("source_id")
        parser.add_argument("target_id")
        parser.add_argument("--edge", default="related_to", choices=[e.value for e in EdgeType])
        parser.add_argument("--weight", type=float, default=0.5)
        parser.add_argument("--reason")

    def handle(self, *args, **o):
        conn = edge_create(source_ref=o["source_id"], target_ref=o["target_id"], edge=EdgeType(o["edge"]),
                           weight=o["weight"], reason=o["reason"])
        self.stdout.write(f"Connected {o['source_id'][:8]} -[{conn.edge}]-> {conn.target[:8]}")
