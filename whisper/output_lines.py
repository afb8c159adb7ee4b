"""Whether a prompt of several lines is a tool's output with no line a person wrote (session 26, near3; issue 11).

`whisper.pasted.is_pasted_output` silences output alone when every line has a shape it knows (a traceback frame, a log
line, a shell prompt, a test id). Output has more shapes than any list holds ("Resolved 84 packages in 1.21s",
"collected 214 items", "On branch fix/x", a `docker ps` table, "CONFLICT (content): …"), and the lists grow one
shape at a time. This reads the other side: a line a person wrote. A person's line asks (`whisper.asked.asks`),
requests (`whisper.imperative.is_request`), ends with "?", or speaks in the first person (a closed class of English
and Dutch pronouns: "I", "we", "my", "ik", "mijn", …). A prompt of two or more lines (after fenced blocks and
XML-ish elements are cut out, `whisper.pasted`) none of which is a person's is output alone, and whisper stays
silent on it (stage 1, `early_exit`).

Pure: strings in, answers out.
"""

from __future__ import annotations

import re

from whisper.asked import asks
from whisper.imperative import is_request
from whisper.pasted import typed_text

# The first person, as a person writes about what they ran (a closed class: English and Dutch pronouns).
_FIRST_PERSON = re.compile(r"(?<![\w/.-])(?:i|i'm|i've|i'd|i'll|me|my|mine|we|we're|we've|us|our|ours|ik|mij|mijn|"
                           r"wij|ons|onze)(?![\w/.-])", re.IGNORECASE)
_QUESTION = re.compile(r"\?\s*$")


def persons_line(line: str) -> bool:
    """Whether one line reads as written by a person: it asks, requests, ends with "?" or says "I" / "we"."""
    line = line.strip()
    return bool(_QUESTION.search(line) or _FIRST_PERSON.search(line) or asks(line) or is_request(line))


def is_output_alone(prompt: str) -> bool:
    """True when the prompt's typed text (fenced blocks and XML-ish elements cut out) has two or more lines and no
    line a person wrote (`persons_line`): "$ uv run ruff format --check .\\n38 files already formatted". One line
    that asks, requests or speaks in the first person makes it a person's prompt."""
    lines = [line for line in typed_text(prompt).splitlines() if line.strip()]
    return len(lines) >= 2 and not any(persons_line(line) for line in lines)
