from django.core.management.base import BaseCommand

from ormah_site.mcp_server import run_stdio


class Command(BaseCommand):
    help = "Serve Ormah's MCP tools over stdio for an agent (the Ormah server must be running)."
    requires_system_checks = []  # the MCP server only speaks HTTP to the API; start fast, touch no database

    def handle(self, *args, **options):
        run_stdio()
