"""Whether a prompt is what a tool or an agent's harness emitted, with no words of a person around it (docs/whisper.md,
stage 1 `early_exit`): a fenced block of command output, a log, a stack trace, a diff, a test run, a JSON document or
an XML-ish message, and nothing else. Read by the shape of such output, never by its words: what a person wrote
around a paste ("only on prod, works fine locally:", "what am I missing") is left, and a prompt with any such text
is a person's (whisper answers "ran X, got this: <trace>. how do I fix it?"). Pure: strings in, answers out.
"""

from __future__ import annotations

import json
import re

# A fenced block (``` or ~~~, any info string) and a whole XML-ish element ("<bash-stdout>…</bash-stdout>",
# "<system-reminder>…</system-reminder>"): a person's text is what stays when they are cut out.
_FENCE = re.compile(r"(?ms)^[ \t]*(```|~~~)[^\n]*\n.*?(?:^[ \t]*\1[ \t]*$|\Z)")
_ELEMENT = re.compile(r"(?s)<([A-Za-z][\w:.-]*)(?:\s[^<>]*)?>.*?</\1\s*>")
_PLACEHOLDER = re.compile(r"\[(?:image|pasted text|file|attachment) #\d+[^\]]*\]", re.IGNORECASE)

# One line of tool output, by shape:
_OUTPUT_LINE = re.compile(
    r"""^(?:[ \t]{2,}\S                                                # an indented line (a frame's source, a body)
    | \s*(?:
      traceback\ \(most\ recent\ call\ last\):                  # a Python traceback's head
    | file\ "[^"]+",\ line\ \d+                                 # its frames
    | at\ \S+.*[(\s]\S+:\d+(?::\d+)?\)?$                        # a JS/Java frame: "at fn (path:12:3)"
    | [A-Za-z_][\w.]*(?:error|exception|warning|exit|interrupt|fault)\b(?:\ \[\w+\])?:  # "KeyError: …"
    | (?:\[?\d{4}-\d\d-\d\d[T\ ]\d\d:\d\d|\[?\d\d:\d\d:\d\d)   # a timestamped log line
    | \[(?:trace|debug|info|notice|warn|warning|error|fatal|critical)\]      # a log level as a log writes it: "[ERROR]",
    | (?:trace|debug|info|notice|warn|warning|error|fatal|critical):      # "WARNING: …", "info: …",
    | (?-i:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|FATAL|CRITICAL)\s  # "ERROR queue unreachable" (not "Error in …")
    | [\w.-]+\ (?:err!|warn!?)\s                                 # "npm ERR! …"
    | [\w.-]+-\d+\s+\|                                          # a compose service's log: "osrm-1  | …"
    | [$>]\ \S                                                 # a shell prompt and its command
    | (?:diff\ --git|index\ [0-9a-f]+\.\.|@@\ |\+\+\+\ |---\ )  # a diff's header
    | [=_*-]{5,}                                                # a rule ("===== test session starts =====")
    | (?:failed|passed|error|skipped|ok)\ +\S+::                # a test id: "FAILED tests/x.py::test_y"
    | \S+\.\w+\ [.sfexF]+\ *\[\s*\d+%\]                         # progress: "tests/test_x.py ....  [ 18%]"
    | (?:\d+\ [a-z]+,\ )*\d+\ [a-z]+\ in\ \d+(?:\.\d+)?\ ?s\b     # a run's summary: "1 failed, 213 passed in 4.02s"
    | [✓✔✗✘×]\s                                                 # a build step's mark
    | [{}\[\]],?$                                              # a brace of JSON
    | "[^"\n]+":\ *(?:["{\[]|-?\d|true\b|false\b|null\b)      # a JSON member: a key, then a JSON value
    ))""", re.IGNORECASE | re.VERBOSE)
# A line that ends with a question mark is a person asking, whatever its shape ("Error: what do I do?").
_ASKS = re.compile(r"\?\s*$")


def _is_json(text: str) -> bool:
    if text[:1] not in "{[":
        return False
    try:
        return isinstance(json.loads(text), (dict, list))
    except ValueError:
        return False


def typed_text(prompt: str) -> str:
    """The prompt with its fenced blocks and XML-ish elements (a harness's "<system-reminder>…</system-reminder>", a
    pasted log in a fence) cut out: what the person typed around them; the whole prompt when nothing is left (a
    paste alone is read as it is). "<system-reminder>The user opened docker-compose.yml</system-reminder> how much
    ram does the osrm container need" -> "how much ram does the osrm container need"."""
    rest = _ELEMENT.sub(" ", _FENCE.sub(" ", _PLACEHOLDER.sub(" ", prompt))).strip()
    return rest if any(ch.isalpha() for ch in rest) else prompt


def is_pasted_output(prompt: str) -> bool:
    """True when the prompt is output alone: one or more fenced blocks or XML-ish elements with no letter outside
    them, a JSON object or array, or several lines each of them in the shape of tool output (a traceback, log lines,
    a test run, a diff, a shell session). One line of prose outside the paste makes it a person's prompt."""
    text = _PLACEHOLDER.sub(" ", prompt).strip()
    if not text:
        return False
    if _is_json(text):
        return True
    rest = _ELEMENT.sub(" ", _FENCE.sub(" ", text))
    cut = len(rest) < len(text)
    lines = [line for line in rest.splitlines() if line.strip()]
    if cut and not any(ch.isalpha() for ch in rest):
        return True
    return len(lines) >= 2 and all(_OUTPUT_LINE.match(line) and not _ASKS.search(line) for line in lines)
