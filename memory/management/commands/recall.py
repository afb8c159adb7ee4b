import json

from memory.conf import get_conf
from memory.domain.search import SearchQuery
from memory.management.base import OrmahCommand
from memory.schemas import HitOut
from memory.search import format_hits_text, recall

GLOBAL = "global"


def _list(value: str | None) -> list[str] | None:
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    return items or None


class Command(OrmahCommand):
    help = "Search memories (the same pipeline as the API; searching never counts as use)."

    def add_arguments(self, parser):
        parser.add_argument("query")
        parser.add_argument("--limit", type=int, default=10)
        parser.add_argument("--types", help="comma-separated node types")
        parser.add_argument("--tiers", help="comma-separated tiers")
        parser.add_argument("--spaces", help=f"comma-separated spaces to keep ('{GLOBAL}' for global memories)")
        parser.add_argument("--tags", help="comma-separated tags (any of them)")
        parser.add_argument("--after", help="created on or after (ISO date or datetime)")
        parser.add_argument("--before", help="created before (ISO date or datetime)")
        parser.add_argument("--space", help="the current project: its memories rank first (default: ORMAH_SPACE)")
        parser.add_argument("--history", action="store_true", help="include memories marked outdated")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        spaces = _list(o["spaces"])
        query = SearchQuery(
            query=o["query"], limit=o["limit"], types=_list(o["types"]), tiers=_list(o["tiers"]),
            spaces=[None if s == GLOBAL else s for s in spaces] if spaces else None, tags=_list(o["tags"]),
            created_after=o["after"], created_before=o["before"],
            default_space=o["space"] or get_conf().default_space, include_outdated=o["history"],
        )
        hits = recall(query=query)
        if o["json"]:
            self.stdout.write(json.dumps([HitOut.model_validate(h).model_dump(mode="json") for h in hits]))
        else:
            self.stdout.write(format_hits_text(hits).rstrip("\n"))
