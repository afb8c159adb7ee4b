"""Ormah's Django project: settings, the API, the CLI."""

__version__ = "0.2.0"
