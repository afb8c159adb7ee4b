from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _sync_schedules(sender, using="default", **kwargs) -> None:
    from maintenance.schedules import schedules_sync

    if using == "default":
        schedules_sync()


class MaintenanceConfig(AppConfig):
    name = "maintenance"
    verbose_name = "Maintenance"

    def ready(self) -> None:
        # The job schedules are data in code; every migrate brings django-q2's Schedule rows in line with them.
        post_migrate.connect(_sync_schedules, sender=self, dispatch_uid="maintenance.schedules_sync")
        # django-q2 sends post_spawn in each job worker it forks: the worker names itself and closes the runs a
        # killed worker left running (maintenance.cluster).
        from django_q.signals import post_spawn

        from maintenance.cluster import interrupted_runs_close, job_worker_name

        post_spawn.connect(job_worker_name, dispatch_uid="maintenance.job_worker_name")
        post_spawn.connect(interrupted_runs_close, dispatch_uid="maintenance.interrupted_runs_close")
