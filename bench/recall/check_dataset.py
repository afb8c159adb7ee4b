#!/usr/bin/env python3
"""Validate bench/recall/dataset.json.

Usage: python3 bench/recall/check_dataset.py [path/to/dataset.json] [--overlap]

Checks ids, references, edge endpoints, enum values, dates, category
minimums and a few labelling rules (see README.md). Prints counts per
category. Exits 1 if any error is found; warnings do not fail the run.
--overlap also prints word overlap between each query and its relevant
memories (handy when writing paraphrase and edge queries).
"""
import json
import re
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

NODE_TYPES = {"fact", "decision", "preference", "event", "person", "project",
              "concept", "procedure", "goal", "observation"}
TIERS = {"core", "working", "archival"}
EDGE_TYPES = {"part_of", "supports", "depends_on", "derived_from",
              "evolved_from", "related_to", "contradicts"}
BRIDGE_EDGES = {"part_of", "supports", "depends_on", "derived_from"}
CATEGORY_MIN = {"paraphrase": 10, "keyword": 10, "identity": 10,
                "temporal": 10, "project": 10, "edge": 8}
MIN_MEMORIES = 170
MIN_QUERIES = 70
TEMPORAL_MAX_AGE_DAYS = 14
STOPWORDS = set("""a an the and or of to in on at for with by from is are was were be
been it its this that these those i me my we our you your do did does what which who
whom how why when where there here so as into than then not no any about after before
over under up down out off just also only very can could should would will all each
per get got has have had""".split())

errors = []
warnings = []


def err(msg):
    errors.append(msg)


def warn(msg):
    warnings.append(msg)


def parse_time(value, where):
    if not isinstance(value, str):
        err(f"{where}: expected ISO timestamp string, got {value!r}")
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        err(f"{where}: bad timestamp {value!r}")
        return None
    if parsed.tzinfo is None:
        err(f"{where}: timestamp {value!r} has no timezone")
        return None
    return parsed


def words(text):
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in STOPWORDS}


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    show_overlap = "--overlap" in argv
    path = Path(args[0]) if args else Path(__file__).with_name("dataset.json")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"ERROR: cannot read {path}: {exc}")
        return 1

    for key in ("now", "self", "memories", "edges", "queries"):
        if key not in data:
            err(f"top level: missing key {key!r}")
    if errors:
        return report(data, {}, show_overlap)

    now = parse_time(data["now"], "now")
    if not isinstance(data["self"], dict) or not data["self"].get("name"):
        err("self: needs a non-empty name")

    # ---- memories
    memories = {}
    spaces = set()
    for i, mem in enumerate(data["memories"]):
        where = f"memory[{i}]"
        key = mem.get("key")
        if not isinstance(key, str) or not re.fullmatch(r"m\d{3,}", key):
            err(f"{where}: bad key {key!r}")
            continue
        where = f"memory {key}"
        if key in memories:
            err(f"{where}: duplicate key")
        memories[key] = mem
        if mem.get("type") not in NODE_TYPES:
            err(f"{where}: unknown type {mem.get('type')!r}")
        if mem.get("tier") not in TIERS:
            err(f"{where}: unknown tier {mem.get('tier')!r}")
        if mem.get("space") is not None:
            if not isinstance(mem["space"], str) or not mem["space"]:
                err(f"{where}: space must be null or a non-empty string")
            else:
                spaces.add(mem["space"])
        for field in ("title", "content"):
            if not isinstance(mem.get(field), str) or not mem[field].strip():
                err(f"{where}: empty {field}")
        if not isinstance(mem.get("tags"), list) or not all(isinstance(t, str) for t in mem["tags"]):
            err(f"{where}: tags must be a list of strings")
        if not isinstance(mem.get("about_self"), bool):
            err(f"{where}: about_self must be a bool")
        conf = mem.get("confidence")
        if not isinstance(conf, (int, float)) or not 0.0 <= conf <= 1.0:
            err(f"{where}: confidence must be in [0, 1]")
        created = parse_time(mem.get("created"), f"{where}.created")
        mem["_created"] = created
        if created and now and created > now:
            err(f"{where}: created {mem['created']} is after now")
        mem["_valid_until"] = None
        if mem.get("valid_until") is not None:
            valid_until = parse_time(mem["valid_until"], f"{where}.valid_until")
            mem["_valid_until"] = valid_until
            if valid_until and created and valid_until < created:
                err(f"{where}: valid_until before created")
        content = mem.get("content", "")
        sentences = len(re.findall(r"[.!?](\s|$)", content))
        if sentences > 4:
            warn(f"{where}: content has {sentences} sentences (aim for 1-4)")

    def outdated(mem):
        return mem["_valid_until"] is not None and now is not None and mem["_valid_until"] <= now

    # ---- edges
    adjacency = {}
    seen_edges = set()
    for i, edge in enumerate(data["edges"]):
        where = f"edge[{i}]"
        src, dst, kind = edge.get("source"), edge.get("target"), edge.get("edge")
        for end in (src, dst):
            if end not in memories:
                err(f"{where}: endpoint {end!r} does not exist")
        if kind not in EDGE_TYPES:
            err(f"{where}: unknown edge type {kind!r}")
        if src == dst:
            err(f"{where}: self loop on {src}")
        weight = edge.get("weight")
        if not isinstance(weight, (int, float)) or not 0.0 <= weight <= 1.0:
            err(f"{where}: weight must be in [0, 1]")
        if (src, dst, kind) in seen_edges:
            err(f"{where}: duplicate edge {src}->{dst} ({kind})")
        seen_edges.add((src, dst, kind))
        if src in memories and dst in memories:
            adjacency.setdefault(src, []).append((dst, kind))
            adjacency.setdefault(dst, []).append((src, kind))
            if kind == "evolved_from":
                newer, older = memories[src], memories[dst]
                if newer["_created"] and older["_created"] and newer["_created"] <= older["_created"]:
                    err(f"{where}: evolved_from must point newer -> older ({src} -> {dst})")
                if not outdated(older):
                    err(f"{where}: superseded memory {dst} has no past valid_until")
                if outdated(newer):
                    err(f"{where}: newer memory {src} is itself outdated")

    for key, mem in memories.items():
        if outdated(mem) and not any(k == "evolved_from" for _, k in adjacency.get(key, [])):
            warn(f"memory {key}: outdated but no evolved_from edge points at it")

    # ---- queries
    query_ids = set()
    per_category = Counter()
    for i, qry in enumerate(data["queries"]):
        qid = qry.get("id")
        where = f"query {qid or i}"
        if not isinstance(qid, str) or not qid:
            err(f"query[{i}]: missing id")
        elif qid in query_ids:
            err(f"{where}: duplicate id")
        query_ids.add(qid)
        category = qry.get("category")
        if category not in CATEGORY_MIN:
            err(f"{where}: unknown category {category!r}")
        per_category[category] += 1
        if not isinstance(qry.get("query"), str) or not qry["query"].strip():
            err(f"{where}: empty query text")
        relevant = qry.get("relevant")
        if not isinstance(relevant, list) or not relevant:
            err(f"{where}: relevant must be a non-empty list")
            continue
        if len(set(relevant)) != len(relevant):
            err(f"{where}: duplicate ids in relevant")
        if len(relevant) > 3:
            warn(f"{where}: {len(relevant)} relevant memories (aim for 1-2)")
        space = qry.get("space")
        if space is not None and space not in spaces:
            err(f"{where}: space {space!r} is not used by any memory")
        missing = [r for r in relevant if r not in memories]
        for r in missing:
            err(f"{where}: relevant id {r!r} does not exist")
        rel_mems = [memories[r] for r in relevant if r in memories]
        for mem in rel_mems:
            if outdated(mem):
                err(f"{where}: relevant {mem['key']} is outdated; label the current memory instead")
        if category == "identity":
            for mem in rel_mems:
                if not mem["about_self"]:
                    err(f"{where}: identity answer {mem['key']} is not about_self")
        if category == "project":
            if space is None:
                err(f"{where}: project query needs a space")
            for mem in rel_mems:
                if mem["space"] != space:
                    err(f"{where}: relevant {mem['key']} is in space {mem['space']!r}, not {space!r}")
        if category == "temporal" and now:
            for mem in rel_mems:
                if mem["_created"] and now - mem["_created"] > timedelta(days=TEMPORAL_MAX_AGE_DAYS):
                    err(f"{where}: temporal answer {mem['key']} is older than {TEMPORAL_MAX_AGE_DAYS} days")
            if not re.search(r"yesterday|last week|this week|recently|\d+ days ago|today", qry["query"]):
                warn(f"{where}: temporal query has no time phrase")
        if category == "edge":
            match = re.search(r"bridge:\s*(m\d+)", qry.get("note", ""))
            if not match:
                err(f"{where}: edge query note must name the bridge as 'bridge: mNNN'")
            else:
                bridge = match.group(1)
                if bridge not in memories:
                    err(f"{where}: bridge {bridge} does not exist")
                elif bridge in relevant:
                    err(f"{where}: bridge {bridge} must not be listed as relevant")
                else:
                    linked = {other for other, kind in adjacency.get(bridge, []) if kind in BRIDGE_EDGES}
                    for r in relevant:
                        if r not in linked:
                            err(f"{where}: relevant {r} is not linked to bridge {bridge} "
                                f"by {sorted(BRIDGE_EDGES)}")
                    qwords = words(qry["query"])
                    bridge_mem = memories[bridge]
                    bridge_overlap = len(qwords & words(bridge_mem["title"] + " " + bridge_mem["content"]))
                    for mem in rel_mems:
                        rel_overlap = len(qwords & words(mem["title"] + " " + mem["content"]))
                        if rel_overlap > bridge_overlap:
                            warn(f"{where}: relevant {mem['key']} shares more words with the query "
                                 f"than the bridge does ({rel_overlap} > {bridge_overlap})")

    # ---- size requirements
    if len(memories) < MIN_MEMORIES:
        err(f"only {len(memories)} memories (need >= {MIN_MEMORIES})")
    if len(data["queries"]) < MIN_QUERIES:
        err(f"only {len(data['queries'])} queries (need >= {MIN_QUERIES})")
    for category, minimum in CATEGORY_MIN.items():
        if per_category[category] < minimum:
            err(f"category {category!r} has {per_category[category]} queries (need >= {minimum})")
    if not any(e.get("edge") == "contradicts" for e in data["edges"]):
        err("no contradicts edge in the dataset")

    return report(data, memories, show_overlap, per_category, spaces)


def report(data, memories, show_overlap, per_category=None, spaces=None):
    if memories:
        print(f"memories: {len(memories)}  edges: {len(data.get('edges', []))}  "
              f"queries: {len(data.get('queries', []))}")
        print("memory types: " + ", ".join(f"{k}={v}" for k, v in
                                           sorted(Counter(m['type'] for m in memories.values()).items())))
        print("spaces: " + ", ".join(f"{k or 'global'}={v}" for k, v in
                                     sorted(Counter(m['space'] or '' for m in memories.values()).items())))
        print("edge types: " + ", ".join(f"{k}={v}" for k, v in
                                         sorted(Counter(e.get('edge') for e in data['edges']).items())))
        recent = sum(1 for m in memories.values() if m.get("_created") and
                     datetime.fromisoformat(data["now"].replace("Z", "+00:00")) - m["_created"] <= timedelta(days=10))
        print(f"memories created in the last 10 days: {recent}")
    if per_category:
        print("queries per category: " + ", ".join(f"{k}={per_category[k]}" for k in CATEGORY_MIN))
    if show_overlap and memories:
        for qry in data["queries"]:
            qwords = words(qry["query"])
            parts = []
            for r in qry.get("relevant", []):
                if r in memories:
                    m = memories[r]
                    parts.append(f"{r}:{len(qwords & words(m['title'] + ' ' + m['content']))}")
            print(f"  {qry['id']} [{qry['category']}] overlap {' '.join(parts)} :: {qry['query']}")
    for w in warnings:
        print(f"WARNING: {w}")
    for e in errors:
        print(f"ERROR: {e}")
    print("OK" if not errors else f"FAILED with {len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
