import json
from pathlib import Path

from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.services import memory_export


class Command(OrmahCommand):
    help = "Export every memory (markdown files plus manifest.json) to a new .tar.gz or .zip archive."

    def add_arguments(self, parser):
        parser.add_argument("path", help="the archive to create, ending in .tar.gz, .tgz or .zip")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = memory_export(path=Path(o["path"]))
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        self.stdout.write(f"Exported {counted(report.counts['nodes'], 'memory')} and "
                          f"{counted(report.counts['deleted'], 'forgotten one')} to {report.path}")
