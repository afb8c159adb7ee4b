"""The web UI: every HTMX screen, its view-models, forms and urls, above memory, whisper and maintenance.

Views parse requests and render; reads come from the apps' selectors (through ./view_models), writes go through
the apps' services. No app below imports this package (an import-linter contract in pyproject.toml).
"""
