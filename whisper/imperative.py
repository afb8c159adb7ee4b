"""Whether a prompt asks for a task a stored preference should shape (docs/whisper.md, stage 4): a request in the
imperative, read by grammar and not by a list of verbs. No Django; the only I/O is one read of the tokenizer's
vocabulary per process (whisper.words)."""

from __future__ import annotations

import re

from whisper.words import common_word, english_words

# A task a stored preference should shape: a request (imperative, "I want to …", "can you …", "let's …"), whatever its
# verb (which package manager adds a dependency, which style a commit message follows, which seat a booking takes), or
# a request "in my …"/"with my …" usual tool. English marks the imperative by grammar, not by a list of verbs: after
# the openers below, the first word is a verb in its base form. What is not one is read by grammar too: a word of a
# closed class (question words, auxiliaries, pronouns, determiners and numerals, prepositions, conjunctions,
# interjections), an inflected form (an ordinary word plus "-ed", "-ing" or "-s": "limped", "writing", "runs"; not
# "embed", "bring", "speed"), a name (capitalised, no ordinary word, and no object after it: "Biscuit"), a word
# followed by its subject or a finite verb ("Yesterday I went", "Dinner was late"), a label ("playwright-cli:"), a
# word with a digit or glued to other signs ("HTTP/1.1"), and a prompt of several lines (pasted output, code). A word
# set off by a comma at the start ("Perfect, now run it", "Sorry, I meant …") is read past.
_REQUEST_OPENER = (r"^\s*(?:(?:ok(?:ay)?|so|now|next|then|alright|just|also)[,.!]?\s+)?(?:please\s+)?"
                   r"(?:(?:can|could|would|will) you\s+(?:please\s+)?|i(?:'d| would) like to\s+|i (?:want|need) to\s+|"
                   r"let'?s\s+|help me\s+|go ahead and\s+)?(?:just\s+)?")
_FIRST_WORD = re.compile(
    _REQUEST_OPENER + r"(?P<word>[A-Za-z][\w'\u2019-]*)(?P<after>\S*)(?:\s+(?P<next>[\w'\u2019]+))?", re.IGNORECASE)
CLOSED_CLASS = frozenset("""
what when where who whom whose which why how whatever whenever wherever whoever whichever
is are was were am be been being do does did done have has had can could would will shall should may might must
i you he she it we they me him her us them this that these those there here it's i'm i've i'd i'll we're they're
myself yourself himself herself itself ourselves themselves mine yours ours theirs
the a an my your our their his its some any every each no all both either neither another other such few many much
one two three four five six seven eight nine ten
someone somebody something anyone anybody anything everyone everybody everything nobody nothing none
in on at for with from to of by about after before since until during through without within into onto over under
if while because and but or so nor than as though although unless whether yet
oh ah aw hmm hm um uh er oops whoa wow hey hi hello yes yeah yep yup nope ok okay not
morning evening afternoon goodnight good gm yo howdy hiya bye cheers
""".split())  # the last line: greetings, which open chit-chat ("good morning!", "morning! coffee first"), not a task
_OBJECT_START = frozenset("the a an this that these those my our your all every each me us it them him her".split())
_SUBJECTS = frozenset("i we he she they you it's i'm we're they're he's she's".split())
FINITE = frozenset("is are was were am has had will would can could does did should isn't aren't wasn't weren't "
                    "hasn't doesn't didn't won't can't".split())
_CLAUSE_WORD = re.compile(r"[A-Za-z][\w'\u2019-]*|\S")


def _subject_first(rest: str) -> bool:
    """Whether the words after the first word show it to be (part of) a subject: a subject pronoun right after it
    ("Yesterday I went"), or, before any closed-class word, an auxiliary or a past form ending its clause ("Dinner
    was late", "elevation gain is …", "Biscuit limped after the walk", "the deploy failed"; not "retry failed
    requests", whose "-ed" word goes with a noun)."""
    words = [w.lower().replace("\u2019", "'") for w in _CLAUSE_WORD.findall(rest)[:4]]
    if words[:1] and words[0] in _SUBJECTS:
        return True
    for i, word in enumerate(words[:2]):
        if word in FINITE:
            return True
        if word in CLOSED_CLASS or not word[:1].isalpha():
            return False
        after = words[i + 1] if i + 1 < len(words) else ""
        if word.endswith("ed") and inflected(word) and (after in CLOSED_CLASS or not after[:1].isalpha()):
            return True
    return False


def _stem_word(stem: str) -> bool:
    return len(stem) >= 3 and stem in english_words()


def inflected(word: str) -> bool:
    """Whether a lowercase word is an ordinary word plus an ending of tense, aspect or number ("limped", "hoped",
    "stopped", "writing", "running", "runs", "carries"), read by its stem; "embed", "feed", "speed", "bring",
    "ping", "focus" are base forms (no ordinary word is left when the ending is off)."""
    if word.endswith(("'s", "\u2019s")):
        return True
    if word.endswith("ied") or word.endswith("ies"):
        return _stem_word(word[:-3] + "y")
    if word.endswith("ed"):
        stem = word[:-2]
        return (_stem_word(stem) or (len(stem) >= 4 and _stem_word(stem + "e"))
                or (len(stem) > 3 and stem[-1] == stem[-2] and _stem_word(stem[:-1])))
    if word.endswith("ing"):
        stem = word[:-3]
        return (_stem_word(stem) or _stem_word(stem + "e")
                or (len(stem) > 3 and stem[-1] == stem[-2] and _stem_word(stem[:-1])))
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return _stem_word(word[:-1]) or (word.endswith("es") and _stem_word(word[:-2]))
    return False


_REQUEST = re.compile(r"^\s*(?:please\s+)?(?:(?:can|could|would|will) you|i(?:'d| would) like to|i (?:want|need) to|"
                      r"let'?s|help me|go ahead and|(?:kun|kunt|kan|wil|wilt|zou|zoudt) (?:je|jij|u))\b", re.IGNORECASE)


def is_request(prompt: str) -> bool:
    """True when the prompt asks for something to be done: it opens with one of the request openers ("can you", "I'd
    like to", "let's", "help me", …), or it is one line opening with a verb in its base form ("fill in the form",
    "bring the charger", "embed the chart"; after "ok", "please", "now", …, and past a word set off by a comma). A
    question ("what is …?", "does it …?"), a statement ("the doctor wants …", "Biscuit limped …", "Yesterday I
    went …", "writing a test …"), a label ("playwright-cli: …") and pasted output (a traceback, "HTTP/1.1 502 …",
    several lines) are not requests. No part-of-speech tagger: a statement opening with a plain noun that is also
    a verb ("cake tastes odd") still reads as a request."""
    if _REQUEST.search(prompt):
        return True
    text = prompt.strip()
    if "\n" in text:
        return False
    for _ in range(3):  # a word set off by a comma is read past: "Perfect, now run it", "OK, great, run it"
        m = _FIRST_WORD.search(text)
        if m is None or m.group("after") != ",":
            break
        text = text[m.end("after"):]
    if m is None or m.group("after")[:1] not in ("", "!"):
        return False
    raw = m.group("word").replace("\u2019", "'")
    word, following = raw.lower(), (m.group("next") or "").lower().replace("\u2019", "'")
    if word in CLOSED_CLASS or any(ch.isdigit() for ch in word) or inflected(word):
        return False
    if m.group("after") == "" and _subject_first(text[m.end("after"):]):
        return False  # "Yesterday I went", "Dinner was late": the first word is no verb
    if following not in _OBJECT_START and not written_in_words(text):
        return False  # "zzqxv blorf": no ordinary word and no object after the first, so nothing reads as a verb
    # A capitalised word that is no ordinary word is a name ("Biscuit limped"), unless an object follows it as one
    # follows a verb ("Embed the chart", "Grep it"): a name is followed by its verb, not by "the".
    return not (raw[:1].isupper() and raw[1:2].islower() and not common_word(word) and following not in _OBJECT_START)


_LETTERS = re.compile(r"[A-Za-z]+")


def written_in_words(prompt: str) -> bool:
    """Whether the prompt holds an ordinary English word of three letters or more that is not of a closed class
    ("zzqxv blorf" holds none, nor "hi!"): a prompt without one asks for no task."""
    return any(len(w) >= 3 and w.lower() not in CLOSED_CLASS and common_word(w) for w in _LETTERS.findall(prompt))


def preference_task(prompt: str) -> bool:
    """True when the prompt asks for a task a stored preference should shape: a request (`is_request`: "I want to add
    requests to the project", "please format this file", "book me a hotel in Rome"). Questions about facts ("what is
    …", "when did …") are not tasks, and since session 22 neither is asking leave ("should I …", "can I …", "kan
    ik …": session 9's and 20's rule changed no dev prompt of batches 6-13 and was removed; docs/whisper.md, "Rules
    audited on fresh batches (session 22)")."""
    return is_request(prompt)
