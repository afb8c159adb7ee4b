import json

from memory.conf import get_conf
from memory.context.pack import context_pack_build
from memory.domain.packing import PackPolicy, pack_text
from memory.domain.trust_requests import ContextPackIn
from memory.domain.wording import counted
from memory.management.base import OrmahCommand
from memory.trust_schemas import ContextPackOut


class Command(OrmahCommand):
    help = "A budgeted, cited context pack (the same router as POST /api/agent/context-pack)."

    def add_arguments(self, parser):
        parser.add_argument("query", nargs="?", default="")
        parser.add_argument("--budget", type=int, default=1200, help="token budget (default 1200)")
        parser.add_argument("--policy", choices=[p.value for p in PackPolicy], default="auto")
        parser.add_argument("--scope", help="global, user, project:NAME, workspace:/PATH or session:ID")
        parser.add_argument("--workspace", help="the agent's workspace folder: drift warnings against it")
        parser.add_argument("--session", help="the session whose active state to pack")
        parser.add_argument("--space", help="the current project: its memories rank first (default: ORMAH_SPACE)")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **o):
        request = ContextPackIn(
            query=o["query"], budget_tokens=o["budget"], policy=o["policy"], scope=o["scope"],
            workspace={"path": o["workspace"]} if o["workspace"] else None, session_id=o["session"],
            default_space=o["space"] or get_conf().default_space,
        )
        result = context_pack_build(request=request)
        text = pack_text(result)
        if o["json"]:
            data = {"query": result.query, "policy": result.policy.value, "budget_tokens": result.budget_tokens,
                    "items": result.items, "estimated_tokens": result.estimated_tokens,
                    "verification_warnings": result.verification_warnings,
                    "recall_warnings": result.recall_warnings, "text": text}
            self.stdout.write(json.dumps(ContextPackOut.model_validate(data).model_dump(mode="json")))
            return
        self.stdout.write(text.rstrip("\n") or "Nothing to pack.")
        self.stdout.write(f"-- {result.estimated_tokens}/{result.budget_tokens} tokens, {counted(len(result.items), 'item')}")
