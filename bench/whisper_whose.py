"""Owner agreement on the labelled stores (session 27, whose17; issue 11): does the memory name WHOSE thing the
prompt asks about? Not kept in whisper (docs/benchmarks.md, "Whisper owner, session 27": +4 fully right on dev 1-17,
none broken, against the +5 needed); the reading lives here so that nobody tries it again blind.

    python -m bench.whisper_stores --split dev --show > RUN.txt   # one full dev run, every prompt's outcome
    python -m bench.whisper_whose owners                          # the dev prompts naming an owner, and the owner
    python -m bench.whisper_whose screen RUN.txt                  # the owner check on that run's injections
    python -m bench.whisper_whose expected                        # the dev answers the check would drop
    python -m bench.whisper_whose cpu                             # CPU per call of asked_owners and missing_owner

"When is Jonas's mother's birthday?" asks about the mother's birthday; "Jonas's birthday is 9 March" holds a
birthday on the right subject but of another owner. A question (a "?", or a question word or auxiliary first; not a
request: "book me flights for karim's birthday") that names the owner of the thing it asks about with a possessive
names one of two kinds of owner (`asked_owners`, the last owner of each chain: "Jonas's mother's" asks the mother's):

* a relation ("my mum's recital", "Jonas's mother's birthday", "my old landlord's name", "her brother's car"): a
  noun for a person by their tie to someone (`RELATIONS`, English and the Dutch words a user may type), read
  whatever stands before it;
* a name ("ter Horst's KvK number", "gpxkit's CI"): a word with "'s" that no determiner or possessive pronoun
  precedes within two words ("the club's", "this year's", "the bread app's" name a thing) and that is no word of a
  closed class ("what's", "it's", "today's", the days and months, "people's").

`missing_owner` gives the asked owner a memory's title, text and labels never name: a relation by any word of its
group ("mum", "mother", "moeder"), a relative of the user's ("my sister's little one") also by any kin word or
"family", a name as a whole word. All words here are closed classes of English (and Dutch relation words); names are
read from the prompt and the memory, none is listed.

Only the dev prompts a fit may read (bench.whisper_silence.dev_prompts: the held-out batch,
bench.whisper_gate_fit.FRESH_BATCHES, and the sealed ones are left out before anything is read).

`screen` (design, not a decision: the full dev run decides): each prompt's injected memories in a `--show` run less
those whose text (title, content, tags, space) misses an owner the prompt asks about (`missing_owner`); made /
broken / net by batch and by store. `expected`: the expected and accepted memories of the dev inject prompts that
the check would drop, each checked directly, whether or not today's run injects them.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import time
from collections import Counter
from pathlib import Path

from whisper.pasted import typed_text

# Words for a person by their tie to someone, in groups that name the same person ("mum" and "mother"). English and
# Dutch, as a user types them. The first groups are kin (`KIN`): the user's relatives go by other kin words from the
# user's side ("my sister's little one" is a nephew) or by name in a note filed as family.
_KIN_GROUPS = (
    "mother mum mom mummy mommy mama moeder",
    "father dad daddy papa vader",
    "parent parents ouders",
    "sister sis zus zusje",
    "brother bro broer broertje",
    "son zoon",
    "daughter dochter",
    "child children kid kids kinderen",
    "wife husband partner spouse girlfriend boyfriend fiance fiancee echtgenoot echtgenote",
    "grandmother grandma gran granny nan nana oma",
    "grandfather grandpa granddad opa",
    "grandson granddaughter grandchild kleinkind kleinzoon kleindochter",
    "aunt auntie tante",
    "uncle oom",
    "cousin neef nicht",
    "niece nicht",
    "nephew neef",
    "in-law in-laws schoonmoeder schoonvader godmother godfather godson goddaughter",
)
_OTHER_GROUPS = (
    "friend vriend vriendin",
    "colleague coworker collega",
    "boss baas",
    "neighbour neighbor buurman buurvrouw buren",
    "landlord landlady huisbaas verhuurder",
    "roommate flatmate housemate huisgenoot",
)
RELATIONS: dict[str, frozenset[str]] = {word: frozenset(group.split())
                                        for group in (*_KIN_GROUPS, *_OTHER_GROUPS) for word in group.split()}
KIN = frozenset(word for group in _KIN_GROUPS for word in group.split())
_FAMILY = frozenset(("family", "familie"))
_USER = frozenset(("my", "our", "mijn", "onze", "ons"))

# Before the owner (up to two words, within the phrase), a word that makes it a thing: "the club's", "this year's",
# "the bread app's", "our team's".
_DETERMINERS = frozenset("""the a an this that these those my our your his her their its last next each every any
some no de het een mijn onze jouw zijn haar hun""".split())
# Words that take "'s" but name no owner: contractions and closed-class words, the days and months, people at large.
_NOT_OWNERS = frozenset("""it that what who where when how why there here he she let this one everyone everybody
someone somebody anyone anybody nobody else today tonight yesterday tomorrow which whose whatever whoever people
person others monday tuesday wednesday thursday friday saturday sunday january february march april may june july
august september october november december""".split())

_POSSESSIVE = re.compile(r"([A-Za-z][\w-]*)['\u2019]s\b(?!['\u2019])")
_PHRASE_BEFORE = re.compile(r"((?:[A-Za-z][\w'\u2019-]*\s+){0,2})$")
# A question: a question mark, or a question word or an auxiliary first ("when's jonas's mum's birthday").
_QUESTION = re.compile(r"^\W*(?:(?:and|so|ok|okay|but|also|oh|hey)\W+)?(?:what|which|who|whom|whose|when|where|how|"
                       r"why|is|are|was|were|do|does|did|can|could|will|would|should|has|have|had)\b", re.IGNORECASE)


def _questions(text: str) -> list[str]:
    """The sentences of a typed prompt that ask a question (not a request: "book me flights for karim's birthday")."""
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if "?" in s or _QUESTION.match(s)]


def asked_owners(question: str) -> list[tuple[str, str, bool]]:
    """The owners a question names with a possessive, as (kind, word folded, headed by the user), the last of each
    chain only, kind "relation" or "name": "when is Jonas's mother's birthday?" -> [("relation", "mother", False)],
    "when did my sister's little one come" -> [("relation", "sister", True)], "what's ter horst's kvk number" ->
    [("name", "horst", False)], "what's the club's iban" and "who picked december's novel?" -> []."""
    owners: list[tuple[str, str, bool]] = []
    for sentence in _questions(typed_text(question)):
        matches = list(_POSSESSIVE.finditer(sentence))
        head = 0
        for i, m in enumerate(matches):
            nxt = matches[i + 1] if i + 1 < len(matches) else None
            if i == 0 or not re.fullmatch(r"\s+", sentence[matches[i - 1].end():m.start()]):
                head = m.start()  # the first owner of this chain
            if nxt is not None and re.fullmatch(r"\s+", sentence[m.end():nxt.start()]):
                continue  # not the last of a chain: "Jonas's" in "Jonas's mother's"
            word = m.group(1).lower()
            before = _PHRASE_BEFORE.search(sentence[:head]).group(1).lower().split()
            if word in RELATIONS:
                owners.append(("relation", word, bool(before) and before[-1] in _USER))
            elif word not in _NOT_OWNERS and not any(w in _DETERMINERS for w in before):
                owners.append(("name", word, False))
    return owners


def names_owner(text: str, owner: tuple[str, str, bool]) -> bool:
    """Whether a memory's text (title, content, labels) names the owner: a relation by any word of its group (and
    its plural), a relative of the user's also by any kin word or "family"; a name as a whole word."""
    kind, word, users = owner
    words = RELATIONS[word] if kind == "relation" else frozenset((word,))
    if kind == "relation" and users and word in KIN:
        words = KIN | _FAMILY
    pattern = r"\b(?:" + "|".join(re.escape(w) for w in sorted(words)) + r")(?:s|es)?\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


def missing_owner(question: str, text: str) -> str | None:
    """The first owner a question asks about (`asked_owners`) that the memory's text never names, else None."""
    for owner in asked_owners(question):
        if not names_owner(text, owner):
            return owner[1]
    return None



def _memories() -> dict[str, dict]:
    from bench.datasets.loader import merged_memories

    return {m["key"]: m for m in merged_memories()[0]}


def memory_text(m: dict) -> str:
    """What the check reads of a memory: title, content and labels (tags and space), as the focus stage does."""
    labels = " ".join((*m.get("tags", ()), m.get("space") or ""))
    return f"{m['title']}\n{m['content']}\n{labels}"


def read_show(path: str) -> dict[str, list[str]]:
    """A `--show` run's dev lines: prompt id -> injected keys."""
    out = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[0] != "dev" or "[" not in line:
            continue
        out[parts[1]] = ast.literal_eval(line[line.index("["):line.index("]") + 1])
    return out


def owners() -> list[str]:
    from bench.whisper_silence import dev_prompts

    lines, count = [], Counter()
    for p in dev_prompts().values():
        found = asked_owners(p["prompt"])
        if found:
            count[p["kind"]] += 1
            lines.append(f"{p['id']} ({p['kind']}) {found} {p['prompt'][:110]!r}")
    lines.append(f"{sum(count.values())} dev prompts name an owner: {dict(count)}")
    return lines


def screen(path: str) -> list[str]:
    from bench.prompt_groups import group_of
    from bench.whisper_near import fully_right
    from bench.whisper_silence import dev_prompts

    prompts, mems, run = dev_prompts(), _memories(), read_show(path)
    lines, net = [], Counter()
    for pid, injected in run.items():
        p = prompts.get(pid)
        if p is None:
            continue
        after = [k for k in injected if missing_owner(p["prompt"], memory_text(mems[k])) is None]
        if after == injected:
            continue
        was, now = fully_right(p, injected), fully_right(p, after)
        change = "made" if now and not was else "broken" if was and not now else "same"
        net[change] += 1
        net["batch " + group_of(p, "batch")] += (change == "made") - (change == "broken")
        net[group_of(p, "store")] += (change == "made") - (change == "broken")
        lines.append(f"{change:6} {pid} ({p['kind']}) {p['prompt'][:100]!r} {injected} -> {after}")
    lines.append(f"made {net['made']}, broken {net['broken']}, same {net['same']}: net {net['made'] - net['broken']:+d}")
    lines.append("  " + ", ".join(f"{k} {v:+d}" for k, v in sorted(net.items()) if k not in ("made", "broken", "same")))
    return lines


def expected() -> list[str]:
    from bench.whisper_silence import dev_prompts

    mems = _memories()
    lines, judged = [], 0
    for p in dev_prompts().values():
        if p["kind"] != "inject":
            continue
        for key in (*p.get("expect", ()), *p.get("accept", ())):
            if key not in mems:
                continue
            judged += 1
            owner = missing_owner(p["prompt"], memory_text(mems[key]))
            if owner is not None:
                lines.append(f"{p['id']} {key} owner {owner!r}: {p['prompt'][:100]!r} / {mems[key]['title']!r}")
    lines.append(f"{len(lines)} of {judged} expected or accepted memories of dev inject prompts dropped")
    return lines


def cpu() -> list[str]:
    from bench.whisper_silence import dev_prompts

    prompts = [p["prompt"] for p in dev_prompts().values()]
    text = memory_text(next(iter(_memories().values())))
    start = time.process_time()
    for prompt in prompts:
        asked_owners(prompt)
    per_prompt = (time.process_time() - start) / len(prompts)
    start = time.process_time()
    for prompt in prompts:
        missing_owner(prompt, text)
    per_memory = (time.process_time() - start) / len(prompts)
    return [f"asked_owners {per_prompt * 1e6:.0f} us a prompt, missing_owner {per_memory * 1e6:.0f} us a memory "
            f"(process CPU, {len(prompts)} dev prompts)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.whisper_whose", description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("owners", "screen", "expected", "cpu"))
    parser.add_argument("run", nargs="?", help="a --show run (screen)")
    args = parser.parse_args(argv)
    if args.what == "screen" and not args.run:
        parser.error("screen needs a --show run")
    lines = {"owners": owners, "expected": expected, "cpu": cpu}.get(args.what, lambda: screen(args.run))()
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
