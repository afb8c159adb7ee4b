import json
from pathlib import Path

from memory.management.base import OrmahCommand
from memory.services import memory_import


class Command(OrmahCommand):
    help = ("Import an `ormah export` archive, an Ormah memory folder (with nodes/) or a folder of markdown notes; "
            "existing ids are skipped, so running it twice is safe.")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--space", help="space for plain notes (Ormah node files keep their own)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = memory_import(path=Path(o["path"]), space=o["space"])
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        self.stdout.write(f"Imported {len(report.imported)} memories and {len(report.forgotten)} forgotten ones")
        for path, reason in report.skipped:
            self.stderr.write(f"Skipped {path}: {reason}")
