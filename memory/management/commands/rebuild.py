import json

from memory.management.base import OrmahCommand, progress_bar
from memory.services import index_sync


class Command(OrmahCommand):
    help = "Rebuild the index from the markdown files (--incremental only indexes what changed)."

    def add_arguments(self, parser):
        parser.add_argument("--incremental", action="store_true")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = index_sync(full=not o["incremental"], progress=None if o["json"] else progress_bar())
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        self.stdout.write(f"Indexed {report.indexed}, unchanged {report.unchanged}, removed {report.removed}, "
                          f"embedded {report.embedded}")
        for path, reason in report.malformed:
            self.stderr.write(f"Malformed (skipped, left untouched): {path}: {reason}")
