"""An OpenAI-compatible chat-completions provider (OpenAI, Ollama, llama.cpp server, vLLM, LM Studio) over httpx."""

from __future__ import annotations

import ipaddress
import logging
import time
from urllib.parse import urlsplit

import httpx
from pydantic import ValidationError

from maintenance.conf import LLMConf
from maintenance.errors import LLMBudgetExhausted, LLMOutOfTime, LLMUnavailable
from maintenance.llm.base import T, extract_json

logger = logging.getLogger(__name__)
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


def _loopback(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    try:
        address = None if host == "localhost" else ipaddress.ip_address(host)
        return address is None or address.is_loopback or address.is_unspecified  # 0.0.0.0, :: reach this machine
    except ValueError:
        return False


class OpenAICompatibleProvider:
    """POST {base_url}/chat/completions with JSON mode; retries with exponential backoff; a per-run call cap."""

    def __init__(self, conf: LLMConf) -> None:
        self.conf = conf
        self.calls = 0
        self.deadline: float | None = None  # time.monotonic() bound of the job run (set by llm_for_run)
        headers = {"Authorization": f"Bearer {conf.api_key}"} if conf.api_key else {}
        # A local endpoint (Ollama, llama.cpp) is reached directly: httpx sends a loopback URL through HTTP_PROXY /
        # http_proxy unless NO_PROXY names it, which would hand the proxy every memory a job sends. A remote one keeps
        # the environment's proxy settings.
        self._client = httpx.Client(base_url=conf.base_url, timeout=conf.timeout, headers=headers,
                                    trust_env=not _loopback(conf.base_url))

    def complete_json(self, *, system: str, user: str, schema: type[T]) -> T:
        body = {
            "model": self.conf.model, "temperature": 0, "response_format": {"type": "json_object"},
            "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        }
        problem = "no attempt made"
        for attempt in range(self.conf.max_retries + 1):
            if attempt:
                time.sleep(min(self.conf.backoff * 2 ** (attempt - 1), max(0.0, self._left())))
            if self._left() <= 0:
                raise LLMOutOfTime("The job reached its time bound")
            if self.calls >= self.conf.max_calls_per_run:
                raise LLMBudgetExhausted(f"This run used its {self.conf.max_calls_per_run} LLM calls")
            self.calls += 1
            try:
                response = self._client.post("/chat/completions", json=body,
                                             timeout=min(self.conf.timeout, self._left()))
            except httpx.TimeoutException as exc:
                if self._left() <= 0:
                    raise LLMOutOfTime("The job reached its time bound while waiting for the LLM") from exc
                problem = f"{type(exc).__name__}: {exc}"
                continue
            except httpx.HTTPError as exc:
                problem = f"{type(exc).__name__}: {exc}"
                continue
            if response.status_code in RETRY_STATUS:
                problem = f"HTTP {response.status_code}"
                continue
            if response.status_code == 400 and "response_format" in body:
                body.pop("response_format")  # some servers reject JSON mode; the prompt asks for JSON anyway
                problem = "HTTP 400 with JSON mode"
                continue
            if response.status_code >= 400:
                raise LLMUnavailable(f"The LLM endpoint answered HTTP {response.status_code}")
            try:
                text = response.json()["choices"][0]["message"]["content"]
                return schema.model_validate(extract_json(text or ""))
            except (ValueError, KeyError, IndexError, TypeError, ValidationError) as exc:
                problem = f"unusable answer: {str(exc)[:200]}"
                logger.debug("LLM answer rejected: %s", exc)
        logger.warning("LLM call failed after %s attempts: %s", self.conf.max_retries + 1, problem)
        raise LLMUnavailable(f"The LLM did not give a usable answer ({problem})")

    def _left(self) -> float:
        """Seconds left before the run's time bound (unbounded without one)."""
        return float("inf") if self.deadline is None else self.deadline - time.monotonic()

    def close(self) -> None:
        self._client.close()
