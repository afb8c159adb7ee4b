"""The `ormah` console script: a thin front for the management commands."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    """Run `ormah <command> ...` as `manage.py <command> ...` (hyphens in the name read as underscores)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    from django.core.management import execute_from_command_line

    args = list(sys.argv[1:] if argv is None else argv)
    if args and not args[0].startswith("-"):
        args[0] = args[0].replace("-", "_")  # `ormah context-pack` runs the context_pack command
    execute_from_command_line(["ormah", *(args or ["help"])])


if __name__ == "__main__":
    main()
