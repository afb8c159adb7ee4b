"""What one job run carries (clock, deadline, LLM, counts) and its incremental progress (watermark + seen hashes).

A job looks only at nodes written since its watermark (`indexed_seq`) whose embedded text it has not examined
yet (NodeSeenRow), so importance-only rewrites do not make the whole store new again. A run that stops early (time
bound, LLM cap) leaves the watermark just below the first node it did not finish.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from maintenance.conf import MaintenanceConf
from maintenance.detectors.facts import NodeFacts
from maintenance.llm import LLMProvider
from maintenance.models import JobStateRow, NodeSeenRow
from maintenance.selectors import job_state, seen_hashes, top_seq


@dataclass
class RunContext:
    job: str
    conf: MaintenanceConf
    now: datetime
    deadline: float
    llm: LLMProvider | None = None
    counts: Counter = field(default_factory=Counter)
    complete: bool = True
    queue_floor: float | None = None  # a full review queue refused drafts of this priority (see propose)
    llm_spent: bool = False  # the run's LLM calls or time are used up (see maintenance.services.pairs.llm_verdicts)

    def out_of_time(self) -> bool:
        """True (and the run marked incomplete) once the run's time bound has passed."""
        if time.monotonic() < self.deadline:
            return False
        self.complete = False
        return True

    def stop(self) -> None:
        """Mark the run incomplete (an LLM cap or a per-run limit was reached)."""
        self.complete = False


@dataclass
class Work:
    """The nodes a job still has to examine, and those it finished this run."""

    job: str
    candidates: list[NodeFacts]
    top: int
    done: list[NodeFacts] = field(default_factory=list)


def work_begin(job: str, facts: Iterable[NodeFacts], keep: Callable[[NodeFacts], bool] = lambda f: True) -> Work:
    """New or changed nodes (never the self node) that `keep` accepts and the job has not examined as they are."""
    top = top_seq()
    mark = job_state(job).watermark
    fresh = [f for f in facts if f.indexed_seq > mark and not f.is_self and keep(f)]
    seen = seen_hashes(job, [f.uid for f in fresh])
    return Work(job=job, candidates=[f for f in fresh if seen.get(f.uid) != f.embed_hash], top=top)


def work_finish(work: Work) -> None:
    """Record the examined nodes and move the watermark up to just below the first node left unfinished."""
    NodeSeenRow.objects.bulk_create(
        [NodeSeenRow(job=work.job, node_uid=f.uid, embed_hash=f.embed_hash) for f in work.done],
        update_conflicts=True, unique_fields=["job", "node_uid"], update_fields=["embed_hash"], batch_size=500,
    )
    done = {f.uid for f in work.done}
    left = [f.indexed_seq for f in work.candidates if f.uid not in done]
    mark = min(left) - 1 if left else work.top
    JobStateRow.objects.filter(job=work.job, watermark__lt=mark).update(watermark=mark)
