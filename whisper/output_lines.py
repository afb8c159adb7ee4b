"""Whether a prompt of several lines is a tool's output with no line a person wrote (session 26, near3; issue 11).

`whisper.pasted.is_pasted_output` silences output alone when every line has a shape it knows (a traceback frame, a log
line, a shell prompt, a test id). Output has more shapes than any list holds ("Resolved 84 packages in 1.21s",
"collected 214 items", "On branch fix/x", a `docker ps` table, "CONFLICT (content): …"), and the lists grow one
shape at a time. This reads the other side: a line a person wrote. A person's line asks (`whisper.asked.asks`),
requests (`whisper.imperative.is_request`), ends with "?", or speaks in the first person (a closed class of English
and Dutch pronouns: "I", "we", "my", "ik", "mijn", …). A prompt of two or more lines (after fenced blocks and
XML-ish elements are cut out, `whisper.pasted`) none of which is a person's, and at least half of which carry a
mark of machine text (`machine_marks`: a shell prompt, a column gap, a path, a number glued to a unit or a hash, a
pipe or brackets, a line with no letter), is output alone, and whisper stays silent on it (stage 1, `early_exit`).
The marks keep a person's plain lines a person's ("The checkout page is slow.\nIt takes 4 seconds on mobile.": no
pronoun, question or request, but no mark either; review15, session 26).

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
# A mark of machine text in a line (by shape, no word of any store): a shell prompt opening it ("$ uv run …"), a gap
# of three spaces or a tab between two columns, a path ("src/app.py", "origin/main"), a token of digits glued to
# letters or signs ("1.21s", "402ms", "==2.1.1", "9c41e0a", "100%", "0.0.0.0:5432"), a pipe, square or curly
# brackets, "==", "::", "->", or a key glued to a value ("PostToolUse:Edit"). Not "#" or ">" opening a line: a
# person's heading and a quoted mail are a person's paste.
_MARK = re.compile(r"^\s*\$\s|\S(?: {3,}|\t)\S|\w/[\w.-]|[|\[\]{}]|==|::|->|\w:\w")
_GLUED = frozenset(".=%:/")


def _glued_number(token: str) -> bool:
    """A token of digits glued to letters or signs, its sentence punctuation stripped ("1.21s", "9c41e0a", "100%";
    not "4", "2026." nor "(12)")."""
    token = token.strip(".,;:!?()'\"")
    return any(ch.isdigit() for ch in token) and any(ch.isalpha() or ch in _GLUED for ch in token)


def persons_line(line: str) -> bool:
    """Whether one line reads as written by a person: it asks, requests, ends with "?" or says "I" / "we"."""
    line = line.strip()
    return bool(_QUESTION.search(line) or _FIRST_PERSON.search(line) or asks(line) or is_request(line))


def machine_marks(line: str) -> bool:
    """Whether a line carries a mark of machine text (`_MARK`, `_glued_number`), or holds no letter at all
    ("..........", "-----")."""
    return not any(ch.isalpha() for ch in line) or bool(_MARK.search(line)) or any(map(_glued_number, line.split()))


def is_output_alone(prompt: str) -> bool:
    """True when the prompt's typed text (fenced blocks and XML-ish elements cut out) has two or more lines, no line
    a person wrote (`persons_line`) and a mark of machine text on at least half of them (`machine_marks`): "$ uv run
    ruff format --check .\\n38 files already formatted". One line that asks, requests or speaks in the first person
    makes it a person's prompt, and so do plain lines ("Typo fix in the README\\nalso the date in the footer")."""
    lines = [line for line in typed_text(prompt).splitlines() if line.strip()]
    return (len(lines) >= 2 and 2 * sum(machine_marks(line) for line in lines) >= len(lines)
            and not any(persons_line(line) for line in lines))
