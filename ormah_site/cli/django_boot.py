"""Starting Django for the commands that need it (imported only then: the thin commands never load Django).

A command prints its own output and errors; its log records go to the log file (`logs/ormah.log`). The console log
handler of Ormah's settings (for `ormah serve`, whose terminal shows the served tree's log) shows a command's
warnings and errors only: `ormah backup`, `restore` and `tasks run` printed their INFO lines above their output.
"""

from __future__ import annotations

import logging
import os
import sys

CONSOLE_LOGGING = {"serve"}  # the commands whose console shows every log record of the configured level


def django_setup(*, console_logs: bool = False) -> None:
    """Configure Django with Ormah's settings (once); unless `console_logs`, the console shows warnings and up."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    import django

    django.setup()
    if not console_logs:
        console_warnings_only()


def console_warnings_only() -> None:
    """Raise the root logger's console handlers (stream handlers that are not files) to WARNING; files keep all."""
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler) and not isinstance(handler, logging.FileHandler):
            handler.setLevel(max(handler.level, logging.WARNING))


def run_command(name: str, argv: list[str]) -> None:
    """Run the management command `name` with the given arguments, as `manage.py name argv...` would."""
    django_setup(console_logs=name in CONSOLE_LOGGING)
    from django.core.management import CommandError, ManagementUtility
    from django.core.management.base import SystemCheckError

    # The command itself, as ManagementUtility.execute runs it after its own django.setup(): a second setup would
    # configure logging anew and undo console_warnings_only. With --traceback a CommandError comes back to us, so
    # it reads "ormah: No backup ..." like every other command's error, not Django's "CommandError: No backup ...".
    try:
        ManagementUtility(["ormah", name, *argv]).fetch_command(name).run_from_argv(["ormah", name, *argv,
                                                                                    "--traceback"])
    except CommandError as exc:
        print(exc if isinstance(exc, SystemCheckError) else f"ormah: {exc}", file=sys.stderr)
        sys.exit(exc.returncode)


def run_admin(argv: list[str]) -> None:
    """`ormah admin ...`: Django's own command line (every management command, Django's included)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    from django.core.management import ManagementUtility

    utility = ManagementUtility(["ormah admin", *(argv or ["help"])])
    utility.prog_name = "ormah admin"
    utility.execute()
