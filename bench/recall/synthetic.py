"""Synthetic memories for the latency benchmark: generated sentences and stand-in topic vectors (no model).

Every memory names one topic ("invoice generator", "deep sleep", ...). Its vector is a random unit vector
near that topic's random centroid (cosine about 0.4 to same-topic memories, about 0 to others), and a query
vector is one near the topic the query names, so a KNN sees realistic neighbourhoods without embedding
100,000 texts.
"""

from __future__ import annotations

import hashlib
import random
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np

from memory.domain.node import Connection, Node
from memory.domain.search import SearchQuery
from memory.domain.text import content_words

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
DIM = 384
SEED = 7

TOPICS = [
    "invoice generator", "payment webhook", "login page", "search index", "sync worker", "cron scheduler",
    "API gateway", "rate limiter", "retry queue", "feature flags", "upload endpoint", "report exporter",
    "notification fan-out", "session store", "audit log", "metrics collector", "image resizer", "billing ledger",
    "moisture sensor", "valve controller", "backup job", "DNS resolver", "ingress controller", "bibliography",
    "chapter draft", "settings panel", "graph view", "CSV importer", "tax calculation", "currency rounding",
    "deploy pipeline", "release checklist", "on-call rota", "alert routing", "secrets vault", "TLS certificates",
    "database migration", "connection pool", "query planner", "cache invalidation", "event outbox", "MQTT broker",
    "battery budget", "deep sleep", "OTA updates", "soil readings", "thesis dataset", "literature review",
]
TOOLS = ["PostgreSQL", "SQLite", "Redis", "Go", "Python", "SvelteKit", "Django", "k3s", "Kafka", "ESP32", "Caddy",
         "Neovim", "ripgrep", "pytest", "Grafana", "Prometheus", "ntfy", "Vault", "SOPS", "Terraform", "restic"]
PEOPLE = ["Dana", "Marco", "Priya", "Tomasz", "Aiko", "Lena", "Kwame", "Sofia", "Ravi", "Ingrid", "Mateo"]
PROJECTS = ["billing-service", "ormah-web", "garden-iot", "thesis", "infra", "mobile-app", "data-pipeline"]
SYMPTOMS = ["times out", "returns 502", "double-counts", "leaks file descriptors", "deadlocks", "drops messages",
            "rounds amounts down", "skips the last page", "panics on empty input", "retries forever"]
CONDITIONS = ["the queue backs up", "two workers start at once", "the payload has emoji", "the disk is nearly full",
              "daylight saving time changes", "the cache is cold", "the upstream is slow", "Wi-Fi drops"]
FIXES = ["an idempotency key", "a per-tenant lock", "streaming the response", "a bounded retry with jitter",
         "normalising to UTC at the edge", "a partial index", "moving the work to a background job"]
REASONS = ["it starts faster", "the team already uses it", "it works offline", "the defaults are sane",
           "the error messages are clearer", "it survived the last outage"]
TAGS = ["postgres", "latency", "billing", "security", "ops", "firmware", "writing", "testing", "ci", "incident"]
TEMPLATES = [
    ("fact", "The {topic} in {project} runs on {tool} and {symptom} when {condition}.", None),
    ("decision", "Decided to move the {topic} to {tool} because {reason}; {person} agreed.", "{tool} for the {topic}"),
    ("event", "Incident: the {topic} {symptom} when {condition}. Fixed by {fix}.", "Incident: {topic}"),
    ("procedure", "To fix the {topic} when it {symptom}: check whether {condition}, then try {fix}.", None),
    ("preference", "{person} prefers {tool} for the {topic} because {reason}.", None),
    ("observation", "The {topic} got slower after the {tool} upgrade; {person} suspects {condition}.", None),
    ("goal", "Goal: make the {topic} stop failing when {condition}, using {fix}.", "Fix the {topic}"),
    ("concept", "In the {topic}, {fix} means retried work is safe when {condition}.", "{topic} idea"),
]
TYPES_OF_EDGES = ["supports", "part_of", "depends_on", "derived_from", "related_to", "contradicts"]


def _topic_of(text: str) -> int:
    low = text.lower()
    for i, topic in enumerate(TOPICS):
        if topic.lower() in low:
            return i
    return int(hashlib.sha256(low.encode()).hexdigest(), 16) % len(TOPICS)


def _centroids() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    c = rng.standard_normal((len(TOPICS), DIM)).astype(np.float32)
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def _near(centroid: np.ndarray, spread: float, key: str) -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))
    v = centroid + spread * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


class TopicEmbedder:
    """Stand-in for documents: a random unit vector near the text's topic centroid (no model)."""

    model_id = "bench/topic-random-384"
    dim = DIM

    def __init__(self) -> None:
        self.centroids = _centroids()

    def embed_documents(self, texts):
        return np.stack([_near(self.centroids[_topic_of(t)], 1.2, t) for t in texts])

    def embed_query(self, text):
        return _near(self.centroids[_topic_of(text)], 0.8, "q:" + text)


class TimedQueryEmbedder:
    """The real MiniLM computes each query vector (its cost counts); the vector used is the topic stand-in."""

    def __init__(self, real, stand_in: TopicEmbedder) -> None:
        self.real, self.stand_in, self.model_id, self.dim = real, stand_in, stand_in.model_id, DIM

    def embed_documents(self, texts):
        return self.stand_in.embed_documents(texts)

    def embed_query(self, text):
        self.real.embed_query(text)
        return self.stand_in.embed_query(text)


def _fill(rng: random.Random, template: str, topic: str) -> str:
    return template.format(topic=topic, tool=rng.choice(TOOLS), person=rng.choice(PEOPLE),
                           project=rng.choice(PROJECTS), symptom=rng.choice(SYMPTOMS),
                           condition=rng.choice(CONDITIONS), fix=rng.choice(FIXES), reason=rng.choice(REASONS))


def generate(n: int):
    """n synthetic nodes (deterministic for a size)."""
    rng = random.Random(SEED)
    nodes: list[Node] = []
    for i in range(n):
        kind, body, title_tpl = rng.choice(TEMPLATES)
        topic = rng.choice(TOPICS)
        content = _fill(rng, body, topic)
        if rng.random() < 0.4:
            content += " " + _fill(rng, rng.choice(TEMPLATES)[1], topic)
        created = NOW - timedelta(seconds=rng.randint(0, 730 * 86400))
        links = ()
        if nodes and rng.random() < 0.2:
            links = tuple(Connection(target=rng.choice(nodes).id, edge=rng.choice(TYPES_OF_EDGES),
                                     weight=round(rng.uniform(0.4, 1.0), 2)) for _ in range(rng.randint(1, 2)))
        nodes.append(Node(
            id=str(uuid.UUID(int=rng.getrandbits(128), version=4)), type=kind,
            tier="core" if rng.random() < 0.01 else ("archival" if rng.random() < 0.1 else "working"),
            content=content, title=_fill(rng, title_tpl, topic) if title_tpl and rng.random() < 0.6 else None,
            created=created, updated=created, last_accessed=created,
            space=None if rng.random() < 0.25 else rng.choice(PROJECTS),
            tags=tuple(sorted(set(rng.sample(TAGS, rng.randint(0, 3))))), connections=links,
            valid_until=created + timedelta(days=30) if rng.random() < 0.03 and created < NOW - timedelta(days=40)
            else None,
        ))
    return nodes


def queries(nodes, count: int):
    """A deterministic mix: keywords (20/50), questions (15/50), a current project (10/50), last week (5/50)."""
    rng = random.Random(SEED + 1)
    out = []
    for i in range(count):
        node = rng.choice(nodes)
        topic = TOPICS[_topic_of(node.content)]
        words = [w for w in content_words(node.content) if w not in topic.lower().split()]
        kind = i % 10
        if kind < 4:
            out.append(SearchQuery(query=f"{topic} {' '.join(rng.sample(words, min(2, len(words))))}"))
        elif kind < 7:
            out.append(SearchQuery(query=f"how do we handle the {topic} when {rng.choice(CONDITIONS)}?"))
        elif kind < 9:
            out.append(SearchQuery(query=f"{topic} {rng.choice(words)}", default_space=rng.choice(PROJECTS)))
        else:
            out.append(SearchQuery(query=f"what changed in the {topic} last week?"))
    return out
