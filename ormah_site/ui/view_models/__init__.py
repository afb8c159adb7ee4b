"""View-models of the web UI: evaluated dataclasses built from the apps' selectors, never from their models."""
