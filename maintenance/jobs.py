"""django-q2 entry points, one shell per job: run it through the runner and hand django-q2 a plain dict."""

from __future__ import annotations

from maintenance.runner import job_execute


def link_memories_job() -> dict:
    """auto_linker, every 24 h."""
    return job_execute("auto_linker", trigger="schedule").as_dict()


def decay_memories_job() -> dict:
    """decay_manager, every 24 h."""
    return job_execute("decay_manager", trigger="schedule").as_dict()


def detect_conflicts_job() -> dict:
    """conflict_detector, every 24 h."""
    return job_execute("conflict_detector", trigger="schedule").as_dict()


def merge_duplicates_job() -> dict:
    """duplicate_merger, every 24 h."""
    return job_execute("duplicate_merger", trigger="schedule").as_dict()


def cluster_spaces_job() -> dict:
    """auto_cluster, every 60 min."""
    return job_execute("auto_cluster", trigger="schedule").as_dict()


def consolidate_memories_job() -> dict:
    """consolidator, every 24 h."""
    return job_execute("consolidator", trigger="schedule").as_dict()


def score_importance_job() -> dict:
    """importance_scorer, every 120 min."""
    return job_execute("importance_scorer", trigger="schedule").as_dict()


def update_index_job() -> dict:
    """index_updater, every minute."""
    return job_execute("index_updater", trigger="schedule").as_dict()
