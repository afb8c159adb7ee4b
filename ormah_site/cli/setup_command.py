"""`ormah setup claude|codex`: print, write or check (the file logic is in ormah_site/cli/agents.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ormah_site.cli import agents
from whisper import claude_settings


def run_setup(o: argparse.Namespace) -> int:
    env = claude_settings.hook_env()
    cwd, home = Path.cwd(), Path.home()
    if o.check:
        ok, report = agents.check(o.agent, env, project=o.project, cwd=cwd, home=home,
                                  prompt=o.prompt or agents.SAMPLE_PROMPT)
        print(report)
        return 0 if ok else 1
    if o.print_only:
        if o.agent == "claude":
            print(agents.claude_print(env, project=o.project, cwd=cwd, home=home), end="")
        else:
            print(f"# {agents.codex_path(home=home)} (our table replaces an earlier [mcp_servers.ormah])\n"
                  f"{agents.codex_block(env)}", end="")
        return 0
    try:
        if o.agent == "claude":
            changes = agents.claude_install(env, project=o.project, cwd=cwd, home=home)
        else:
            changes = agents.codex_install(env, home=home)
    except (OSError, ValueError) as exc:
        print(f"ormah: {exc}", file=sys.stderr)
        return 1
    print(agents.describe(changes))
    if not Path(env["ORMAH_TOKEN_FILE"]).is_file():
        print(f"Note: {env['ORMAH_TOKEN_FILE']} does not exist yet: run `ormah init` before starting the agent.")
    print(f"Check it with: ormah setup {o.agent} --check")
    return 0
