"""What the soak's agents send per route and keep from each answer: bench/soak.py's agents over HTTP and
bench/request_cpu.py's through Django's test client make the same requests (only `_call` differs)."""

from __future__ import annotations

import random
import re

from bench._common import Memory


class RouteCalls:
    """The soak's requests. A subclass sets the attributes below and defines `_call(route, path, body)`, which
    returns the answer's JSON, or None when the request failed."""

    memories: list[Memory]
    fresh: list[Memory]  # memories not in the store, remembered in turn
    rng: random.Random
    session: str  # the whisper and recall session
    index: int  # the agent's number, which spreads agents over `fresh`
    label: str  # written into each remembered text: "(<label>, note <n>)"
    source: str  # the remembered memories' source, "agent:<source>"
    last_ids: list[str]  # what the last recall or whisper returned, for feedback to rate
    last_log: int | None  # the whisper decision those ids came from

    def _call(self, route: str, path: str, body: dict) -> dict | None:
        raise NotImplementedError

    def _query(self) -> str:
        words = [w for w in re.findall(r"[A-Za-z][\w.-]+", self.rng.choice(self.memories).content) if len(w) > 3]
        return " ".join(self.rng.sample(words, min(len(words), self.rng.randint(2, 4))))

    def step(self, route: str, n: int) -> None:
        """Request number `n` on `route` (feedback with nothing to rate is a recall)."""
        if route == "feedback" and not self.last_ids:
            route = "recall"
        if route == "remember":
            m = self.fresh[(self.index * 100_003 + n) % len(self.fresh)]
            self._call(route, "/api/agent/remember", {
                "content": f"{m.content} ({self.label}, note {n})", "type": m.type, "title": m.title,
                "tags": list(m.tags), "space": m.space, "source": f"agent:{self.source}"})
        elif route == "recall":
            answer = self._call(route, "/api/agent/recall", {"query": self._query(), "limit": 10,
                                                               "session_id": self.session})
            if answer:
                self.last_ids, self.last_log = [r["id"] for r in answer["results"]], None
        elif route == "whisper":
            prompt = f"What do we know about {self._query()}?"
            answer = self._call(route, "/api/agent/whisper", {"prompt": prompt, "session_id": self.session})
            if answer and answer.get("node_ids"):
                self.last_ids, self.last_log = answer["node_ids"], answer.get("whisper_log_id")
        else:
            body = {"node_id": self.rng.choice(self.last_ids), "signal": self.rng.choice((1, 1, -1)),
                    "source": "explicit"}
            if self.last_log is not None:
                body["whisper_log_id"] = self.last_log
            self._call(route, "/api/agent/feedback", body)
