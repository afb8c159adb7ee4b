import json
from pathlib import Path

from django.core.management.base import CommandError

from memory.domain.folder_sync import SyncItem, SyncStep
from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.services.folder_sync import folder_sync

LABELS = {SyncStep.TO_FOLDER: "to folder", SyncStep.TO_STORE: "to store", SyncStep.FORGET: "forget",
          SyncStep.REMOVE: "remove", SyncStep.CONFLICT: "conflict", SyncStep.KEEP: "write back",
          SyncStep.RESTORE: "restore", SyncStep.DROP: "remove", SyncStep.HELD: "held"}


def _line(item: SyncItem) -> str:
    where = item.folder.path if item.folder else f"{item.store.path} (store)" if item.store else item.node_id
    return f"  {LABELS[item.step]:<10} {where}  {item.node_id[:8]}: {item.reason}"


class Command(OrmahCommand):
    help = ("Reconcile a folder of memory files (PATH/nodes/*.md, e.g. a git checkout) with the store, both ways; "
            "conflicts keep both versions. Exit status 1 when a conflict, an error or a malformed file needs a look.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="the folder to sync (created when missing; its nodes/ holds the memories)")
        parser.add_argument("--dry-run", action="store_true", help="print the plan; write nothing")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = folder_sync(path=Path(o["path"]), dry_run=o["dry_run"])
        if o["json"]:
            self.stdout.write(json.dumps(report.as_dict()))
        else:
            self._text(report)
        if not report.clean:
            what = [counted(n, *k) for n, k in ((len(report.conflicts), ("conflict",)),
                                               (len(report.errors), ("error",)),
                                               (len(report.malformed), ("malformed file",)),
                                               (len(report.held), ("memory left alone", "memories left alone"))) if n]
            one = len(what) == 1 and what[0].startswith("1 ")
            verb = "would need" if report.dry_run else "needs" if one else "need"
            raise CommandError(f"{', '.join(what)} {verb} a look (see above)")

    def _text(self, report) -> None:
        c = report.counts()
        verb = "Would sync" if report.dry_run else "Synced"
        self.stdout.write(
            f"{verb} {report.path}: {c['to_folder']} to the folder, {c['to_store']} into the store, {c['forget']} "
            f"forgotten, {c['remove'] + c['drop']} removed from the folder, "
            f"{counted(c['conflict'] + c['keep'] + c['restore'], 'conflict')}, {c['in_step']} in step"
            + (f", {c['held']} left alone" if c["held"] else "")
            + (" (dry run: nothing written)" if report.dry_run else ""))
        for item in report.changes:
            self.stdout.write(_line(item))
        if report.notice:
            self.stderr.write(f"Note: {report.notice}")
        for path in report.kept:
            self.stderr.write(f"Kept the losing version of a conflict as {path}")
        for what, reason in report.errors:
            self.stderr.write(f"Not synced {what}: {reason}")
        for path, reason in report.malformed:
            self.stderr.write(f"Malformed (left untouched): {path}: {reason}")
