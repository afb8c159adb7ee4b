import json
from pathlib import Path

from memory.management.base import OrmahCommand
from memory.services.importing import notes_import


class Command(OrmahCommand):
    help = "Import a folder of markdown notes (Ormah node files keep their ids; plain notes become memories)."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--space")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = notes_import(folder=Path(o["path"]), space=o["space"])
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        self.stdout.write(f"Imported {len(report.imported)} memories")
        for path, reason in report.skipped:
            self.stderr.write(f"Skipped {path}: {reason}")
