import json
from pathlib import Path

from memory.domain.wording import counted
from memory.management.base import OrmahCommand, progress_bar
from memory.services import memory_import


class Command(OrmahCommand):
    help = ("Import an `ormah export` archive, an Ormah memory folder (with nodes/) or a folder of markdown notes "
            "(front matter kept, links become edges, duplicates skipped, edited notes updated on a second run).")

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--space", help="space for plain notes (Ormah node files keep their own)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = memory_import(path=Path(o["path"]), space=o["space"], progress=None if o["json"] else progress_bar())
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        line = f"Imported {counted(len(report.imported), 'memory')} and {counted(len(report.forgotten), 'forgotten one')}"
        if report.updated or report.unchanged or report.duplicates or report.links or report.unresolved:
            line += (f"; updated {len(report.updated)}, unchanged {report.unchanged}, {counted(len(report.duplicates), 'duplicate')} "
                     f"skipped, {counted(report.links, 'link')} ({len(report.unresolved)} unresolved)")
        self.stdout.write(line)
        for note, target in report.unresolved:
            self.stderr.write(f"Unresolved link in {note}: {target}")
        for path, reason in report.duplicates:
            self.stderr.write(f"Duplicate {path}: {reason}")
        for path, reason in report.skipped:
            self.stderr.write(f"Skipped {path}: {reason}")
