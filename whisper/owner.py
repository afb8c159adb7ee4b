"""Whose thing a question asks about, and whether a memory names that owner (issue 11, session 27: whose17;
docs/benchmarks.md, "Whisper owner, session 27").

"When is Jonas's mother's birthday?" asks about the mother's birthday; "Jonas's birthday is 9 March" holds a
birthday on the right subject but of another owner. A question (`whisper.asked.asks`) that names the owner of the
thing it asks about with a possessive names one of two kinds of owner (`asked_owners`):

* a relation ("my mum's recital", "Jonas's mother's birthday", "my old landlord's name", "her brother's car"): a
  noun for a person by their tie to someone (`RELATIONS`, English and the Dutch words a user may type), read
  whatever stands before it;
* a name ("Jonas's birthday", "ter Horst's KvK number", "gpxkit's CI"): a word with "'s" that no determiner or
  possessive pronoun comes before ("the club's", "this year's", "my project's" name a thing, not an owner) and that
  is no word of a closed class ("what's", "it's", "today's").

Only the last owner of a chain is the asked one ("Jonas's mother's": the mother). `missing_owner` gives the asked
owner that a memory (its title, text and labels) never names: a relation by any word of its group ("mum", "mother",
"moeder"), a name as a whole word. The focus stage (whisper/stages/focus.py) drops such a memory. All words here are
closed classes of English (and Dutch relation words); names are read from the prompt and the memory, none is listed.
Pure: no Django, no I/O.
"""

from __future__ import annotations

import re

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
