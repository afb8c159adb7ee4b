"""The job registry: every maintenance job declares itself once, with one name, where its body is written.

    @maintenance_job("auto_cluster", every_minutes=60, cycle=60, description="…")
    def cluster_run(ctx: RunContext) -> None: ...

That is the whole of adding a job: the schedule (synced into django-q2 by `schedules_sync`), the sleep-cycle order,
the task list, the API, the CLI and the UI all read this registry. Job bodies live in the modules of
`maintenance.services`; the registry imports that package's modules the first time it is read (never at import
time, so a body module may import whatever it needs).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass

JOB_PACKAGE = "maintenance.services"


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    module: str  # where the body is defined; looked up by name at run time
    function: str
    minutes: int  # schedule interval
    uses_llm: bool
    exclusive: bool  # changes memories: holds the maintenance lock
    cycle: int  # position in the sleep cycle (ascending)
    description: str

    def body(self) -> Callable:
        """The job's body as its module holds it now."""
        return getattr(importlib.import_module(self.module), self.function)


_JOBS: dict[str, JobSpec] = {}
_loaded = False


def maintenance_job(name: str, *, every_minutes: int, cycle: int, description: str, uses_llm: bool = False,
                    exclusive: bool = True) -> Callable[[Callable], Callable]:
    """Register the decorated function as the body of job `name` (called with a RunContext)."""

    def register(fn: Callable) -> Callable:
        spec = JobSpec(name=name, module=fn.__module__, function=fn.__name__, minutes=every_minutes,
                       uses_llm=uses_llm, exclusive=exclusive, cycle=cycle, description=description)
        known = _JOBS.get(name)
        if known is not None and (known.module, known.function) != (spec.module, spec.function):
            raise RuntimeError(f"Two maintenance jobs are named {name}: {known.module}.{known.function} and "
                               f"{spec.module}.{spec.function}")
        _JOBS[name] = spec
        return fn

    return register


def _load() -> None:
    global _loaded
    if _loaded:
        return
    package = importlib.import_module(JOB_PACKAGE)
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{JOB_PACKAGE}.{info.name}")
    _loaded = True


def jobs() -> tuple[JobSpec, ...]:
    """Every registered job, in sleep-cycle order."""
    _load()
    return tuple(sorted(_JOBS.values(), key=lambda s: (s.cycle, s.name)))


def job_spec(name: str) -> JobSpec | None:
    """One job by name, or None."""
    _load()
    return _JOBS.get(name)
