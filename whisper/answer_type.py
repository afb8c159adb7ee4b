"""The kind of answer a question asks for, and whether a memory holds it on the asked subject (issue 11, session 27:
atype17; docs/whisper.md, "The answer type on the asked subject"; docs/benchmarks.md, "Whisper answer type, session
27": +6 fully right on dev 1-17, none broken).

"What's my dentist's phone number?" asks for a phone number; a memory naming the dentist holds none, however close
it scores. `expected_kind` reads the one kind a question's closed-class form names (the first of KINDS it asks):

* "contact": a phone or mobile number, an e-mail address, a web address (url, link, website, homepage) or a postal
  address named as the thing asked ("what / which … phone number", "what's the url of …", "their email?");
* "amount", "count", "number", "time": whisper.kinds' reading of the question (the focus stage's one table of
  kinds: money, "how many <things>", a size / duration / port / version, "when is …" and "what time / day …");
* "person": "who / whom / whose" opening a clause ("who fixed the boiler?"; not "the plumber who came");
* "place": "where" opening a clause before an auxiliary or a verb ("where is the spare key?", "where do we meet").

`holds` reads which of them a memory's title and text hold (its first `limit` characters, as
whisper.kinds): a contact's shape (a run of digits in groups, "+31 …", an e-mail address, "http(s)://", "www.", a
host with a top-level domain, a street word of English or Dutch before a house number, a Dutch postcode "1234 AB");
a person (a capitalised word inside a sentence that is not a month, weekday or a word every sentence may
capitalise, a title before a name, an "@handle"); a place (a preposition of place before a determiner or a
capitalised word, "at home", "upstairs", a path, a host); money, counts, numbers and times by whisper.kinds'
`holds_kind`. All of it closed classes of English (and Dutch street words) and regular shapes: no store's words.
The focus stage (whisper/stages/focus.py) calls `off_subject` last: a question asking a CHECKED kind keeps a memory
only if a sentence of it holding that kind names the subject (a topic word of the prompt). Pure: no Django, no I/O.
"""

from __future__ import annotations

import re

from whisper.asked import asks
from whisper.kinds import CLAUSE, SCAN_CHARS, asked_kinds, holds_kind
from whisper.pasted import typed_text
from whisper.text import topic_tokens

KINDS = ("contact", "amount", "count", "number", "time", "person", "place")
# The kinds the focus stage checks on the subject (`off_subject`): a person and a place are read (bench/whisper_atype.py
# counts them) but not checked, since "who" is answered by a role or a group ("the GP", "students") and "where" by an
# organisation ("where do I work?" and "Employed by the county council") as often as by a name or a place.
CHECKED = frozenset(KINDS) - {"person", "place"}

# ---- what a question asks for

_BARE = re.compile(r"\b(what|where|who|when|how)s\b", re.IGNORECASE)
# The thing asked names a contact: "phone / mobile / cell / telephone (number)", "e-mail (address)", "url", "link",
# "website", "homepage", "web address", "(postal / street / home / delivery) address"; not the verbs ("email him",
# "link the issue", "call the dentist").
_CONTACT_NOUN = (r"(?:(?:phone|mobile|cell|telephone|tel|whatsapp)(?:\s+(?:number|no|nr))?|phone|e-?mail(?:\s+address)?"
                 r"|urls?|links?|website|web\s?site|homepage|web address|(?:postal|street|home|delivery|visiting|"
                 r"mailing)?\s?address)")
_ASKS_CONTACT = re.compile(
    rf"\b(?:what|which)(?:'s|\u2019s| is| was| are| were)? (?:the |our |its |their |your |my |his |her )?"
    rf"(?:[\w'\u2019-]+ ){{0,3}}?{_CONTACT_NOUN}\b"
    rf"|\b{_CONTACT_NOUN}(?:\s+(?:or|and|/)\s+{_CONTACT_NOUN})?\s*\?"
    rf"|\b(?:his|her|their|its)\s+{_CONTACT_NOUN}\b"
    rf"|\bhow (?:do|can|could|should) (?:i|we) (?:reach|contact|call|phone|ring|email|mail)\b",
    re.IGNORECASE)
_ASKS_PERSON = re.compile(rf"{CLAUSE}(?:who|whom|whose)\b(?!\s+(?:else|cares|knows)\b)", re.IGNORECASE)
_ASKS_PLACE = re.compile(rf"{CLAUSE}where(?:'s|\u2019s|\s+(?:is|are|was|were|do|does|did|can|could|should|will|"
                         r"would|have|has|had|must|might|to|else)\b|\s+\w+\s+(?:i|we|you|they|he|she|it)\b)",
                         re.IGNORECASE)


def expected_kind(question: str) -> str | None:
    """The one kind of answer a question asks for ("who fixed the boiler?" -> "person", "what's the dentist's phone
    number?" -> "contact"), None for a prompt that asks none (a method, a reason, a yes/no, a task, a remark)."""
    typed = _BARE.sub(r"\1's", typed_text(question))
    if not asks(typed):
        return None
    if _ASKS_CONTACT.search(typed):
        return "contact"
    kinds = asked_kinds(typed)
    for kind in ("amount", "count", "number", "time"):
        if kind in kinds:
            return kind
    if _ASKS_PERSON.search(typed):
        return "person"
    if _ASKS_PLACE.search(typed):
        return "place"
    return None


# ---- what a memory holds

_MONTHS = frozenset("january february march april may june july august september october november december".split())
_DAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())
# Words a sentence capitalises whatever it is about: the first person, greetings, and the closed words that open a
# clause after a colon or a dash.
_ALWAYS_CAPITAL = frozenset("i i'm i've i'd i'll ok okay todo note notes the a an and but or so if when then".split())
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d{2,4}\)?(?:[ .-]?\d{2,4}){2,5}(?!\w)")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b")
_WEB = re.compile(r"\bhttps?://|\bwww\.|\b[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|app|nl|be|de|eu|uk|co|ai)"
                  r"(?:/[\w./?=&%-]*)?\b", re.IGNORECASE)
# A developer's notes name hosts no public domain ends: localhost, an IP, a host with its port, a private suffix
# (.internal, .lan, .local...) or three dotted labels (staging.example.internal): each is a web address as well.
_HOST = re.compile(r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3})(?::\d{2,5})?\b|\b[a-z][\w-]*(?:\.[\w-]+)*:\d{2,5}\b"
                   r"|\b[\w-]+\.(?:internal|local|lan|home|test|intranet|corp|localdomain)\b"
                   r"|\b[a-z][\w-]*(?:\.[a-z][\w-]*){2,}\b", re.IGNORECASE)
_STREET = re.compile(r"\b[\w'-]*(?:straat|laan|weg|plein|gracht|kade|dijk|singel|street|st\.|road|rd\.|lane|avenue|"
                     r"ave\.|drive|boulevard|square|way)\s+\d{1,4}[a-z]?\b|\b\d{4}\s?[A-Z]{2}\b", re.IGNORECASE)
# A street named without its number ("Dr. Alvarez on Keizersgracht", "on Baker Street"): a postal address too.
_STREET_NAMED = re.compile(r"\b[A-Z][\w'-]*(?:straat|laan|weg|plein|gracht|kade|dijk|singel)\b"
                           r"|\b[A-Z][\w'-]*\s+(?:Street|Road|Avenue|Lane|Boulevard|Square)\b")
_TITLE_NAME = re.compile(r"\b(?:dr|mr|mrs|ms|prof|mevrouw|meneer|dhr|mevr)\.?\s+[A-Z]")
_HANDLE = re.compile(r"(?<![\w.])@[A-Za-z][\w-]{1,}")
_WORD = re.compile(r"[A-Za-z][\w'\u2019-]*")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;\n\u2022*#>-]\s*|\(\s*)$")
_PLACE_PREP = re.compile(r"\b(?:in|at|on|inside|under|behind|above|below|beside|next to|near|outside|upstairs|"
                         r"downstairs|into|from)\s+(?:the|a|an|my|our|his|her|their|your|its|this|that)\s+\w"
                         r"|\b(?:at home|at work|at the office|upstairs|downstairs|abroad|in town|next door)\b"
                         r"|(?:^|\s)(?:~|\.{0,2})/[\w.-]+/", re.IGNORECASE)
_PLACE_NAMED = re.compile(r"\b(?:in|at|near|to|from|via|op|bij)\s+[A-Z][a-z]")


def _named(text: str) -> bool:
    """A capitalised word inside a sentence: not its first word, not a month, weekday or a word any sentence
    capitalises ("I", "OK"), not all capitals (an acronym), no digit (a code)."""
    for m in _WORD.finditer(text):
        word = m.group(0)
        if not word[0].isupper() or word.isupper() or any(ch.isdigit() for ch in word):
            continue
        low = word.lower().rstrip("'\u2019s")
        if low in _MONTHS or low in _DAYS or word.lower() in _ALWAYS_CAPITAL:
            continue
        if _SENTENCE_START.search(text[max(0, m.start() - 3):m.start()]) or m.start() == 0:
            continue
        return True
    return False


def holds(text: str, kind: str, *, limit: int = SCAN_CHARS) -> bool:
    """Whether a memory's text (its first `limit` characters) holds a thing of `kind` (one of KINDS)."""
    text = text[:limit]
    if kind == "contact":
        return bool(_PHONE.search(text) or _EMAIL.search(text) or _WEB.search(text) or _HOST.search(text)
                    or _STREET.search(text) or _STREET_NAMED.search(text))
    if kind == "person":
        return bool(_TITLE_NAME.search(text) or _HANDLE.search(text) or _EMAIL.search(text) or _named(text))
    if kind == "place":
        return bool(_PLACE_PREP.search(text) or _PLACE_NAMED.search(text) or _STREET.search(text)
                    or _WEB.search(text) or _named(text))
    return holds_kind(text, kind, limit=limit)


# ---- the kind held on the asked subject

# A title's full stop ends no sentence ("My dentist is Dr. Alvarez on Keizersgracht").
_SENTENCES = re.compile(r"(?<!\bDr\.)(?<!\bMr\.)(?<!\bMs\.)(?<!\bMrs\.)(?<!\bSt\.)(?<!\bProf\.)(?<=[.!?;])\s+|\n+")


def off_subject(question: str, *, title: str, content: str, context: str = "",
                limit: int = SCAN_CHARS) -> str | None:
    """The kind the question asks for (`expected_kind`, one of CHECKED) when the memory holds none of it on the asked
    subject, else None. On the subject: in a sentence of the memory (its title is one) that shares a topic word
    (`whisper.text.topic_tokens`) with the question or `context` (the earlier prompts a follow-up leans on): "how
    many beta bakers dropped off?" is not met by "Opened the beta on 1 March; 41 sign-ups in the first week." when
    no sentence holding a count names the bakers or the dropping off. A memory sharing no topic word with them at
    all (a paraphrase: "who patched up my teeth" and "Dr. Visser replaced a filling") only needs to hold the kind
    somewhere. Only the first `limit` characters are read."""
    kind = expected_kind(question)
    if kind is None or kind not in CHECKED:
        return None
    text = f"{title}\n{content}"[:limit]
    if not holds(text, kind, limit=limit):
        return kind
    subject = topic_tokens(f"{context}\n{typed_text(question)}")
    if not _shares(topic_tokens(text), subject):
        return None
    if any(_shares(topic_tokens(s), subject) and holds(s, kind, limit=limit) for s in _SENTENCES.split(text)):
        return None
    return kind


def _shares(words: set[str], subject: set[str]) -> bool:
    """Whether a text's topic words meet the subject's: the same folded word, or one the start of the other
    ("roof" and "roofer", "climb" and "climbing"), the shorter of four letters or more."""
    if words & subject:
        return True
    return any(len(a) >= 4 and len(b) >= 4 and (a.startswith(b) or b.startswith(a)) for a in words for b in subject)
