import json

from memory.domain.wording import counted
from memory.management.base import OrmahCommand, progress_bar
from memory.services import evidence_sync, index_sync


class Command(OrmahCommand):
    help = ("Rebuild the index from the markdown files and the evidence files (--incremental only indexes what "
            "changed).")

    def add_arguments(self, parser):
        parser.add_argument("--incremental", action="store_true")
        parser.add_argument("--verify", action="store_true", help="trust no hash: rewrite every row from its file")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        report = index_sync(full=not o["incremental"], verify=o["verify"],
                            progress=None if o["json"] else progress_bar())
        evidence = evidence_sync(full=not o["incremental"])
        if o["json"]:
            self.stdout.write(json.dumps({**report.as_dict(), "evidence": evidence.as_dict()}))
            return
        self.stdout.write(f"Indexed {report.indexed}, unchanged {report.unchanged}, removed {report.removed}, "
                          f"embedded {report.embedded}")
        self.stdout.write(f"Evidence: indexed {counted(evidence.indexed, 'event')} from {counted(evidence.files, 'day file')}")
        for file_name, offset, reason in evidence.malformed:
            self.stderr.write(f"Malformed evidence line (skipped, left untouched): {file_name}@{offset}: {reason}")
        for path, reason in report.malformed:
            self.stderr.write(f"Malformed (skipped, left untouched): {path}: {reason}")
