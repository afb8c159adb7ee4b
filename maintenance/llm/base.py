"""What a provider offers: one JSON-answering chat call, validated against a pydantic model, within a budget."""

from __future__ import annotations

import json
import re
from typing import Protocol, TypeVar

from pydantic import BaseModel

T = TypeVar("T", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


class LLMProvider(Protocol):
    """An LLM that answers a system + user prompt with JSON matching `schema`.

    Raises LLMUnavailable when it cannot (after its own retries) and LLMBudgetExhausted once the run's cap of
    calls is spent. `calls` counts the HTTP requests made so far.
    """

    calls: int

    def complete_json(self, *, system: str, user: str, schema: type[T]) -> T: ...

    def close(self) -> None: ...


def extract_json(text: str) -> object:
    """The JSON value in a model's answer, tolerating code fences and prose around one object; raises ValueError."""
    text = text.strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start, end = text.find("{"), text.rfind("}")
        if start < 0 or end <= start:
            raise ValueError("no JSON object in the answer") from None
        return json.loads(text[start:end + 1])
