import json

from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.services import backup_restore


class Command(OrmahCommand):
    help = "Restore a backup (hashes verified first; the current memory is kept as a pre-restore backup)."

    def add_arguments(self, parser):
        parser.add_argument("name", help="a name from `ormah backup --list`, or a backup folder's path")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = backup_restore(name=o["name"])
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
            return
        self.stdout.write(f"Restored {report.name}: {counted(report.counts.get('nodes', 0), 'memory')}, "
                          f"{report.counts.get('deleted', 0)} forgotten; index {report.index}")
        self.stdout.write(f"The memory as it was is kept in backup {report.pre_restore} "
                          f"(undo with: ormah restore {report.pre_restore})")
