import json

from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.services import backup_create, backup_list


class Command(OrmahCommand):
    help = "Back up the memory files and the index (consistent snapshot, keeps the newest BACKUP_KEEP); --list shows them."

    def add_arguments(self, parser):
        parser.add_argument("--list", action="store_true", help="list backups, newest first")
        parser.add_argument("--reason", default="manual", help="a note stored in backup.json")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        if o["list"]:
            backups = backup_list()
            if o["json"]:
                self.stdout.write(json.dumps([b.as_dict() for b in backups]))
                return
            for b in backups:
                counts = f"{counted(_count(b.counts, 'nodes'), 'memory')}, " \
                         f"{counted(_count(b.counts, 'deleted'), 'forgotten one')}"
                note = "" if b.restorable else "  (original format: use `ormah import`)"
                self.stdout.write(f"{b.name}  {b.created_at}  {b.reason}  {counts}{note}")
            if not backups:
                self.stdout.write("No backups yet")
            return
        info = backup_create(reason=o["reason"])
        if o["json"]:
            self.stdout.write(json.dumps(info.as_dict()))
            return
        self.stdout.write(f"Backed up {counted(info.counts.get('nodes', 0), 'memory')} and "
                          f"{counted(info.counts.get('deleted', 0), 'forgotten one')} to {info.path}")


def _count(counts: dict, folder: str) -> int:
    """A folder's file count as a backup's manifest records it (0 when absent or not a number)."""
    value = counts.get(folder, 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
