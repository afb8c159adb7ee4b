"""Starting Django for the commands that need it (imported only then: the thin commands never load Django)."""

from __future__ import annotations

import os


def django_setup() -> None:
    """Configure Django with Ormah's settings (once)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    import django

    django.setup()


def run_command(name: str, argv: list[str]) -> None:
    """Run the management command `name` with the given arguments, as `manage.py name argv...` would."""
    django_setup()
    from django.core.management import execute_from_command_line

    execute_from_command_line(["ormah", name, *argv])


def run_admin(argv: list[str]) -> None:
    """`ormah admin ...`: Django's own command line (every management command, Django's included)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")
    from django.core.management import ManagementUtility

    utility = ManagementUtility(["ormah admin", *(argv or ["help"])])
    utility.prog_name = "ormah admin"
    utility.execute()
