"""Maintenance services: the job bodies, the review queue and the agent protocol (see each module)."""
