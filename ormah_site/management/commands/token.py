import json

from django.core.management import CommandError

from memory.management.base import OrmahCommand, utc_label
from ormah_site.tokens import api_token_create, api_token_list, api_token_revoke


def _when(value) -> str:
    return utc_label(value) if value else "never"


class Command(OrmahCommand):
    help = "API tokens in the database, accepted by every host: create NAME (prints its secret once), list, revoke."

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["create", "list", "revoke"])
        parser.add_argument("name", nargs="?")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        action, name = o["action"], o["name"]
        if action in ("create", "revoke") and not name:
            raise CommandError(f"`token {action}` needs a name")
        if action == "create":
            row, secret = api_token_create(name=name)
            if o["json"]:
                self.stdout.write(json.dumps({"name": row.name, "secret": secret, "created_at": row.created_at},
                                             default=str))
                return
            self.stderr.write(f"Created API token {row.name!r}. Its secret follows, shown this once only (Ormah "
                              "keeps its sha256): give it to the agent as ORMAH_API_TOKEN, or in a 0600 file named "
                              "by ORMAH_TOKEN_FILE.", style_func=str)
            self.stdout.write(secret)
        elif action == "revoke":
            row = api_token_revoke(name=name)
            self.stdout.write(json.dumps({"name": row.name, "revoked_at": row.revoked_at}, default=str) if o["json"]
                              else f"Revoked API token {row.name!r}: every host refuses it from now on.")
        else:
            rows = [{"name": r.name, "digest": r.digest[:12], "created_at": r.created_at,
                     "last_used_at": r.last_used_at, "revoked_at": r.revoked_at} for r in api_token_list()]
            if o["json"]:
                self.stdout.write(json.dumps(rows, default=str))
                return
            for r in rows:
                state = f"revoked {_when(r['revoked_at'])}" if r["revoked_at"] else "active"
                self.stdout.write(f"{r['name']:<24} sha256 {r['digest']}  created {_when(r['created_at'])}  "
                                  f"last used {_when(r['last_used_at'])}  {state}")
            if not rows:
                self.stdout.write("No API tokens in the database (`ormah token create NAME` makes one).")
