"""`ormah whisper inject|store|setup [--global]`: the hook client (delegated) and the Claude Code wiring."""

from __future__ import annotations

import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from whisper import claude_settings, hook


class Command(BaseCommand):
    help = ("inject/store: the agent hook client (stdin: hook JSON); setup: write the hooks into Claude Code's "
            "settings (.claude/settings.local.json, or ~/.claude/settings.json with --global)")

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["inject", "store", "setup"])
        parser.add_argument("--global", dest="global_", action="store_true", help="setup: the user-wide settings")
        parser.add_argument("--path", help="setup: write this settings file instead")

    def handle(self, *args, action, global_, path, **options):
        if action in ("inject", "store"):
            hook.main([action])  # prints the hook output itself; always exits 0
            return
        target = Path(path) if path else claude_settings.settings_path(global_=global_)
        try:
            changed, backup = claude_settings.install(target, python=sys.executable, env=claude_settings.hook_env())
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if not changed:
            self.stdout.write(f"Hooks already in place in {target}")
            return
        self.stdout.write(f"Wrote whisper hooks to {target}" + (f" (backup: {backup})" if backup else ""))
