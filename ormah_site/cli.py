"""The `ormah` console script: a thin front for the management commands."""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> None:
    """Run `ormah <command> ...` as `manage.py <command> ...`; `ormah` alone lists commands."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    from django.core.management import execute_from_command_line

    args = list(sys.argv[1:] if argv is None else argv)
    execute_from_command_line(["ormah", *(args or ["help"])])


if __name__ == "__main__":
    main()
