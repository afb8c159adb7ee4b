"""Subprocess helper for the live tests: `python -m tests.maintenance.live <action>` on the home in ORMAH_HOME.

Actions: `cluster-scene` (nodes for auto_cluster, its schedule made due), `store N` (N varied memories plus a few
near-duplicates and changed numbers, so a sleep cycle has work), `merge-proposal TEXT` (two near-duplicates and a
pending merge proposal whose merged text is TEXT), `consolidation-proposal TEXT` (the same for consolidating two
memories), `approve ID` (approve that proposal). Each prints one JSON line.
"""

from __future__ import annotations

import json
import os
import random
import sys
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.utils import timezone  # noqa: E402
from django_q.models import Schedule  # noqa: E402

from memory import files, runtime  # noqa: E402
from memory.domain.node import new_node_id, utcnow  # noqa: E402
from memory.domain.requests import NodeCreate, build_node  # noqa: E402
from memory.services import edge_create, index_sync, node_create  # noqa: E402

WORDS = {
    "who": ["Robin", "Dana", "the billing team", "the ops crew", "Alex", "the data team", "Sam", "the docs group"],
    "verb": ["keeps", "moved", "reviews", "archives", "benchmarks", "documents", "migrates", "monitors"],
    "what": ["the invoice exporter", "the Grafana board", "the release notes", "the Kafka topic", "the cron table",
             "the onboarding guide", "the Terraform state", "the feature flags"],
    "where": ["in the shared drive", "on the staging cluster", "in the wiki", "behind the VPN", "in S3",
              "on the old laptop", "in the monorepo", "in Notion"],
    "when": ["every Monday", "after each release", "before audits", "on the first of the month", "at night",
             "during the freeze", "twice a year", "when alerts fire"],
}


def remember(content: str, **fields) -> str:
    return node_create(request=NodeCreate(content=content, **fields), auto_link=False).node.id


def varied(rng: random.Random, tag: str) -> str:
    pick = {k: rng.choice(v) for k, v in WORDS.items()}
    return f"{pick['who']} {pick['verb']} {pick['what']} {pick['where']} {pick['when']} ({tag})."


def cluster_scene() -> dict:
    billing = [remember("Invoices are generated nightly", space="billing"),
               remember("Invoices are emailed as PDF", space="billing")]
    loose = remember("The invoice job retries three times")
    for target in billing:
        edge_create(source_ref=loose, target_ref=target)
    Schedule.objects.filter(name="ormah:auto_cluster").update(next_run=timezone.now() - timedelta(seconds=5))
    return {"loose": loose}


def store(n: int) -> dict:
    """Files written straight to the store, then one index sync (batch embedding): fast to seed."""
    rng = random.Random(7)
    texts = [(varied(rng, f"seed {i}"), rng.choice([None, "billing", "ops"])) for i in range(n)]
    texts += [("Ormah uses SQLite as the index of its markdown files", None),
              ("Ormah uses SQLite as the index for its markdown files.", None),
              ("The billing service runs on port 8080", None), ("The billing service runs on port 9090", None)]
    md = runtime.store()
    for content, space in texts:
        files.write_node(md, build_node(NodeCreate(content=content, space=space), node_id=new_node_id(), now=utcnow()))
    return {"nodes": index_sync().indexed}


def merge_proposal(merged_content: str) -> dict:
    from maintenance.conf import get_conf
    from maintenance.detectors.facts import ProposalDraft, ProposalKind
    from maintenance.detectors.payloads import MergePayload
    from maintenance.models import ProposalRow
    from maintenance.services.proposals import proposal_create

    keep = remember("Dana prefers Neovim for code review because it starts faster")
    gone = remember("Dana prefers Neovim for code review since it starts fast")
    draft = ProposalDraft(kind=ProposalKind.MERGE, node_uids=(keep, gone), action="Merge", reason="test", score=0.9,
                          payload=MergePayload(keep_id=keep, discard_id=gone, merged_title=None,
                                               merged_content=merged_content, score={}).as_json())
    assert proposal_create(draft=draft, conf=get_conf(), now=utcnow()) == "created"
    return {"proposal": ProposalRow.objects.get(key=draft.key).proposal_id, "keep": keep, "gone": gone}


def consolidation_proposal(content: str) -> dict:
    from maintenance.conf import get_conf
    from maintenance.detectors.facts import ProposalDraft, ProposalKind
    from maintenance.detectors.payloads import ConsolidationPayload
    from maintenance.models import ProposalRow
    from maintenance.services.proposals import proposal_create

    a = remember("Deploys run from the release branch")
    b = remember("Deploys need a green CI run first")
    draft = ProposalDraft(kind=ProposalKind.CONSOLIDATION, node_uids=(a, b), action="Consolidate", reason="test",
                          score=0.9, payload=ConsolidationPayload(node_ids=[a, b], title="How deploys work",
                                                                  content=content, type="procedure").as_json())
    assert proposal_create(draft=draft, conf=get_conf(), now=utcnow()) == "created"
    return {"proposal": ProposalRow.objects.get(key=draft.key).proposal_id, "a": a, "b": b,
            "paths": [str(runtime.store().path_for(a)), str(runtime.store().path_for(b))]}


def approve(proposal_id: str) -> dict:
    from maintenance.services.proposals import proposal_decide
    from memory.errors import OrmahError

    try:
        return {"status": proposal_decide(proposal_id=proposal_id, action="approve", decided_by="test").status}
    except OrmahError as exc:
        return {"error": exc.message}


if __name__ == "__main__":
    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)
    action = sys.argv[1]
    actions = {"cluster-scene": cluster_scene, "store": lambda n: store(int(n)), "merge-proposal": merge_proposal,
               "consolidation-proposal": consolidation_proposal,
               "approve": approve}
    result = actions[action](*sys.argv[2:])
    print(json.dumps(result), flush=True)
