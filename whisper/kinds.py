"""The kind of thing a question asks for, and whether a memory's text holds one (issue 11, item 9).

"When is Biscuit's vet appointment?" asks for a date or time; a note about Biscuit's vet holding none cannot answer
it, however close it scores. Both sides are read from closed word classes (question words, auxiliaries, months,
weekdays, number words) and regular patterns (digits, clock times); no store's or bench's words are in them.
docs/whisper.md, "The focus rule beyond the identity route".

Kinds: "amount" (an amount of money: a question saying money by a verb of paying, a general noun for the sum, or a
currency; session 10's, removed in session 22, back in session 24 with "what do / does / did … pay / charge / spend":
+7 fully right net on dev 1-14, docs/benchmarks.md "Whisper near misses, session 24"), "time" (a date or time of
day), "number" (a size, duration, port or version; "how much is / was the …" without a word of money asks for a
number of any unit, a memory limit as much as a price), "count" ("how many <things>": a number standing alone, not a
measure, date or time; session 14). The person and the place (session 12) were removed in session 22: they changed no
dev prompt of batches 6-13 (docs/whisper.md, "Rules audited on fresh batches (session 22)").

The thing a count question counts (session 15): "how many crash mats are there?" is not answered by a note whose only
counts count other things ("the two highest top-outs"): `counted_thing`, `holds_count_of`.

Only the start of a memory's title and content is read: the first SCAN_CHARS characters, or as many as whisper
renders (the title and `content_max_chars` of the content, 600 by default) when a user raises that limit past them.
A kind past that is not what the agent is shown, and the cost of a scan stays bounded on a long note.
"""

from __future__ import annotations

import re

from whisper.asked import asks
from whisper.imperative import inflected

# ---- what a question asks for

# The auxiliaries after "when" in a question about a time to come or a habit ("when is …", "when does …"); not the
# past "did / was / were / had": a note's own date answers when something happened ("when did we move to Postgres?"
# and a note written the day it happened).
_AUX = r"(?:is|are|do|does|will|would|should|shall|can|could|has|have|must|might|may|'s|\u2019s|'re|\u2019re)"
CLAUSE = r"(?:^|[.?!;:,\n]\s*|\b(?:and|but|so|also|then|or)\s+)"  # a question word opens a clause, not a relative
# A currency word or sign: a number before one is an amount of money, not a count of things.
_CURRENCY = (r"(?:€|\$|£|¥|₹|eur|euros?|usd|dollars?|pounds?|gbp|quid|yen|jpy|chf|francs?|kronor|krona|kr|sek|"
             r"nok|dkk|cents?|pence|bucks?|btc)")
# "version(s)" as the thing asked; "version control / policy / scheme / …" ask no version (review1, session 18). The
# number kind and the focus stage's version question (stages/focus.py) read it.
VERSION_ASKED = (r"versions?\b(?!\s+(?:control|policy|policies|scheme|strategy|history|bumps?|numbering|naming|"
                 r"manager)\b)")
# A question that says money (session 24, near2; session 10's amount kind, removed in session 22, narrowed): the verbs
# of paying (cost, pay, spend, charge), the general nouns for the sum asked (price, fee, bill, fare), "expensive",
# "cheap", a currency word or sign. No noun of one kind of payment (rent, premium, salary, quote).
_MONEY_WORDS = (r"\b(?:costs?|costing|pay|paid|pays|paying|spend|spent|spends|charged?|charges|price[sd]?|pricing|"
                r"fees?|bills?|billed|fares?|expensive|pricey|cheap|cheaper)\b"
                rf"|[€$£¥₹]|\b{_CURRENCY}(?![a-z])")
# "pay" and "spend" that are no paying: "pay attention / heed / tribute / a visit / off / back", "spend" before a
# span of time ("what did we spend the weekend doing", "what does the team spend most time on").
_PAY = r"pay(?:ing)?(?!\s+(?:attention|heed|tribute|respects|a visit|off|back)\b)"
_SPEND = (r"spend(?:ing)?(?!\s+(?:(?:the|my|our|your|their|his|her|its|a|an|this|that|next|last|most|much|more|so much|"
          r"all|all my|all our|a lot of|free|spare|whole|entire)\s+){0,2}(?:time|hours?|days?|weeks?|weekends?|"
          r"mornings?|evenings?|afternoons?|nights?|holidays?|summer|winter|months?|years?|vacations?|lunch breaks?|"
          r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?)\b)")
# What "how much / how many" asks of when it is no sum of money even beside a word of paying (review13, session 24):
# a span of time ("how many hours did we spend debugging", "how much time did the refactor cost") or a machine's
# resource ("how much memory does the worker cost"); and a cost counted in something else ("cost us in downtime").
_NOT_MONEY = (r"(?:time|hours?|minutes?|seconds?|days?|nights?|weeks?|weekends?|months?|years?|effort|energy|"
              r"memory|ram|cpu|disk|space|storage|bandwidth|tokens?|lines?|steps?|tries|attempts|sleep)\b")
_ASKS = {
    # "how much did the trip cost", "how expensive was it", "what did the trip cost", "what do we pay for the mailing
    # service", "what does the registry charge to file a change", "what's the price of …"; not "what did I do when the
    # cost went up" (a clause's own verb)
    "amount": re.compile(
        rf"\bhow (?:much|many)\b(?!\s+(?:more |less |fewer |extra )?{_NOT_MONEY})[^.?!]*(?:{_MONEY_WORDS})"
        rf"(?!\s+(?:us |me |them |him |her |you )?in (?:terms of )?(?:downtime|{_NOT_MONEY}|performance|latency|speed))"
        r"|\bhow (?:expensive|pricey|cheap)\b"
        r"|\bwhat (?:did|does|do|will|would)\b(?:(?!\b(?:when|if|because|after|before|while|since|until)\b)[^.?!])*"
        rf"\b(?:cost|charge|{_PAY}|{_SPEND})\b"
        r"|\bwhat(?:'s|\u2019s| is| was| were| are)? (?:the )?(?:total |full |final )?(?:price|fee|fees|bill|cost|fare)\b",
        re.IGNORECASE),
    "time": re.compile(
        rf"{CLAUSE}(?:when(?:'s|\u2019s)|when {_AUX}\b|by when|until when|since when)"
        r"|\b(?:what|which) (?:time|date|day|days|weekday|month|year|hour)s?\b"
        r"|\bhow (?:often|soon)\b", re.IGNORECASE),
    "number": re.compile(
        r"\bhow (?:many|much|long|big|large|small|old|far|tall|heavy|fast|high|wide|deep)\b"
        r"|\b(?:what|which)(?:'s|\u2019s| is| was| are)? (?:the |our |its |their |your |my )?(?:[\w-]+ ){0,3}?"
        r"(?:(?:port|number|percentage|size|count|limit|maximum|minimum|timeout|capacity|quota|threshold)s?\b"
        rf"|{VERSION_ASKED})",
        re.IGNORECASE),
}
# Units of measure, short and long (a closed class): a number before one is a measure, not a count of things.
_UNITS_SHORT = (r"%|px|pt|em|rem|[kmgt]i?b|bytes?|kg|g|mg|lbs?|km|m|cm|mm|mi|ft|l|ml|ms|s|secs?|mins?|h|hrs?|kbps|mbps|"
                r"fps|hz|khz|mhz|ghz|x|k|°c?")
_UNIT_NAMES = frozenset("""
second seconds minute minutes hour hours day days week weeks month months year years decade decades
byte bytes kilobyte kilobytes megabyte megabytes gigabyte gigabytes terabyte terabytes pixel pixels px mb gb kb
kilometre kilometres kilometer kilometers km mile miles metre metres meter meters m cm mm feet foot inch inches
kilo kilos kilogram kilograms kg gram grams pound pounds litre litres liter liters ml percent per cent degrees
calories steps
""".split())
_HOW_MANY = re.compile(r"\bhow many ([a-z][\w-]*)", re.IGNORECASE)
# A question asking for a method or a reason asks for no kind ("how do I …", "why …").
_METHOD = re.compile(r"^\s*(?:\w+[,]?\s+)?(?:how (?:do|does|can|could|should|would|will|to|did i|did we)\b|why\b)",
                     re.IGNORECASE)


# "whats", "wheres", "whos", "whens", "hows" typed without the apostrophe are the contractions ("whats the port?").
_BARE_CONTRACTION = re.compile(r"\b(what|where|who|when|how)s\b", re.IGNORECASE)


def asked_kinds(prompt: str) -> frozenset[str]:
    """The kinds of thing a question asks for ("when is the vet appointment?" -> {"time"}); empty for any other
    prompt, for one asking how to do something, and for one asking when something happened ("when did …")."""
    prompt = _BARE_CONTRACTION.sub(r"\1's", prompt)
    if _METHOD.search(prompt) or not asks(prompt):
        return frozenset()
    kinds = {kind for kind, asks in _ASKS.items() if asks.search(prompt)}
    # An amount of money is the number asked for ("how much did it cost?"): "for free" answers it, no digit needed.
    if "amount" in kinds:
        kinds.discard("number")
    # "how many photos …" asks for a count of things, which a measure ("1600 px", "2 MB", "7 minutes") is not; "how
    # many kilometres / hours …" asks for the measure itself.
    if "number" in kinds and any(m.group(1).lower() not in _UNIT_NAMES for m in _HOW_MANY.finditer(prompt)):
        kinds.discard("number")
        kinds.add("count")
    return frozenset(kinds)


# ---- what a memory holds

_MONTHS = ("january february march april may june july august september october november december "
           "jan feb mar apr jun jul aug sep sept oct nov dec")
_DAYS = "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun"
_NUMBER_WORDS = ("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
                 "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred "
                 "thousand million billion dozen half single double twice once triple quarter couple")
_UNITS = "second minute hour day week month year fortnight decade"
_HOLDS = {
    # a currency sign, code or word beside a number ("€1,840", "650 euros", "EUR 40", "12k USD", "nine hundred
    # bucks"), a number up to two words after a word of paying ("Paid 899 for the fridge", "charges 65 an hour",
    # "cost us nine hundred"; review13), a number per a period ("4.51/month", "99/yr"), or no cost at all
    "amount": re.compile(
        rf"(?:[€$£¥₹]\s?\d|\b\d[\d.,]*\s?[km]?\s?{_CURRENCY}(?![a-z])|\b{_CURRENCY}\s?\d"
        r"|\b(?:paid|pay|pays|paying|costs?|costing|charged?|charges|spent|spends?|priced?|prices?|fees?|fares?|"
        rf"billed|bills?)\b(?:\s+[\w']+){{0,2}}?\s+(?:[€$£¥₹]\s?)?(?:\d|(?:{'|'.join(_NUMBER_WORDS.split())})\b)"
        r"|\b\d[\d.,]*\s?/\s?(?:month|mo|year|yr|week|wk|day|night|hour|hr)\b"
        r"|\b(?:for free|free of charge|at no cost|cost nothing|costs nothing)\b)", re.IGNORECASE),
    "time": re.compile(
        r"\b\d{4}-\d{2}(?:-\d{2})?\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{1,2}\.\d{1,2}\.\d{2,4}\b|\b\d{1,2}:\d{2}\b"
        r"|\b\d{1,2}\s?(?:am|pm|h)\b|\b(?:19|20)\d{2}\b|\b\d{1,2}(?:st|nd|rd|th)\b"
        rf"|\b(?:{'|'.join(_MONTHS.split())})\b(?!['\u2019])|\b(?:{'|'.join(_DAYS.split())})s?\b"
        r"|\b(?:today|tonight|tomorrow|yesterday|noon|midday|midnight|morning|mornings|evening|evenings|afternoon|"
        r"afternoons|night|nights|weekend|weekends|daily|weekly|monthly|yearly|annually|nightly|hourly|"
        r"o'clock|dawn|dusk|spring|summer|autumn|fall|winter|christmas|easter)\b"
        rf"|\b(?:next|last|this|every|each|in|within|after|before|per|a|an) (?:\w+ )?(?:{'|'.join(_UNITS.split())})s?\b"
        r"|\bcron\b|\bschedule[ds]?\b", re.IGNORECASE),
    "number": re.compile(
        rf"\d|\b(?:{'|'.join(_NUMBER_WORDS.split())})\b|\b(?:a|an|per) (?:{'|'.join(_UNITS.split())})s?\b"
        r"|\b(?:a few|several|many|no)\b", re.IGNORECASE),
    # a count of things: a number word or a number standing alone, not a measure ("1600 px"), a date ("1 March",
    # "2026"), a time ("14:05"), a version or a part of a name ("B2", "k8s")
    "count": re.compile(
        rf"\b(?:{'|'.join(w for w in _NUMBER_WORDS.split() if w not in ('half', 'quarter', 'once', 'twice'))})\b"
        r"|\b(?:a few|several|a couple|a handful|no)\b"
        r"|(?<![\w.:/-])(?!(?:19|20)\d\d\b)\d[\d,]*(?![\w.:/-]*\d)(?![\w])"
        rf"(?!\s?(?:{_UNITS_SHORT})(?![\w]))(?!\s+(?:{'|'.join(_UNIT_NAMES)})\b)"
        rf"(?!\s+(?:{'|'.join(_MONTHS.split())})\b)", re.IGNORECASE),
}


SCAN_CHARS = 2000  # of a memory's title and content: above the 600 content characters whisper renders by default


def scan_chars(title: str, content_max_chars: int) -> int:
    """How much of "title\ncontent" to read: what whisper renders of it (the title and `content_max_chars` of the
    content), never less than SCAN_CHARS."""
    return max(SCAN_CHARS, len(title) + 1 + content_max_chars)


def holds_kind(text: str, kind: str, *, limit: int = SCAN_CHARS) -> bool:
    """Whether a memory's text (its first `limit` characters) holds a thing of that kind ("time": "Thursday 9:30",
    "next week"; "number": "4 workers", "two"; "count": a number standing alone)."""
    return bool(_HOLDS[kind].search(text[:limit]))


def missing_kind(prompt: str, text: str, *, limit: int = SCAN_CHARS) -> str | None:
    """The first kind the question asks for that the memory's text (its first `limit` characters: `scan_chars`)
    does not hold, None when it holds every one."""
    return next((kind for kind in sorted(asked_kinds(prompt)) if not holds_kind(text, kind, limit=limit)), None)


# ---- the thing counted (session 15): "how many crash mats …" is not met by a count of top-outs

# The words that end the thing counted ("how many crash mats ARE there"): auxiliaries, prepositions, pronouns.
_COUNT_END = frozenset("""
are is was were do does did have has had can could will would should shall must might may there here in on at
of for per to from by with without into onto across around over under we you they i he she it our your their
his her its the a an this that these those now left total altogether exactly roughly about still already up down
out off
""".split())
# A number of people ("how many people", "how many of us") is met by a count of any persons ("41 sign-ups").
_ANYONE = frozenset("people persons person folks ones things times members users".split())
_COUNT_WORD = (r"(?:\d[\d,]*|"
               + "|".join(w for w in _NUMBER_WORDS.split() if w not in ("half", "quarter", "once", "twice"))
               + r"|a few|several|a couple(?: of)?|a handful(?: of)?|a dozen|dozens(?: of)?|no)")


# A number before a unit or a currency is a measure or an amount, not a count ("1,280 euros for the canoes").
_NOT_A_MEASURE = (rf"(?!\s?(?:{_UNITS_SHORT}|{_CURRENCY})(?![\w]))(?!\s+(?:{'|'.join(_UNIT_NAMES)})\b)")


def counted_thing(prompt: str) -> str | None:
    """The head word of the thing a "how many <things>" question counts ("how many crash mats are there in the
    kelder" -> "mats", "how many buses go up there" -> "buses"), None when there is none, it is a unit ("how many kilometres") or any person ("people")."""
    m = _HOW_MANY.search(prompt)
    if m is None:
        return None
    words = re.findall(r"[a-z][\w-]*", re.split(r"[.?!,;:\n]", prompt[m.start(1):])[0].lower())
    if words[0].endswith("ed") and inflected(words[0]):  # a participle ("how many signed up"), not "beds", "sheds"
        return None
    phrase = []
    for word in words[:3]:
        if word in _COUNT_END:
            break
        phrase.append(word)
    # the head is the phrase's last plural ("crash mats", "bus passes"), not a verb after it ("buses go up")
    head = next((w for w in reversed(phrase) if _plural(w)), phrase[-1] if phrase else None)
    if head is None or head in _UNIT_NAMES or head in _ANYONE or words[0] in _ANYONE:
        return None
    return head


def holds_count_of(text: str, thing: str, *, limit: int = SCAN_CHARS) -> bool:
    """Whether a memory's text may hold a count of `thing`: a count word, up to three words, then the thing, singular
    or plural ("two new crash mats", "60 depots", "ten Saturday mornings for kids"), or a count standing alone
    ("we own three.", "12 in total"), which may count anything. False when its only counts count other things ("the
    two highest top-outs" for "how many crash mats")."""
    text = text[:limit]
    forms = "|".join(re.escape(form) for form in sorted(number_forms(thing), key=len, reverse=True))
    thing_after = rf"(?i)\b{_COUNT_WORD}\b{_NOT_A_MEASURE}(?:\s+[\w'-]+){{0,3}}?\s+(?:{forms})\b"
    if re.search(thing_after, text):
        return True
    # a count standing alone, not a year nor a day of a date ("15 September 2025:")
    return any(not re.search(rf"(?i)\b(?:{'|'.join(_MONTHS.split())})\.?\s*$", text[:m.start()])
               for m in _BARE_COUNT.finditer(text))


# Plurals no ending rule makes (a closed class of English): the plural -> its singular.
_IRREGULAR = {"children": "child", "men": "man", "women": "woman", "people": "person", "mice": "mouse",
              "geese": "goose", "teeth": "tooth", "feet": "foot", "oxen": "ox", "dice": "die", "lice": "louse",
              "criteria": "criterion", "phenomena": "phenomenon", "indices": "index", "matrices": "matrix",
              "vertices": "vertex", "analyses": "analysis", "theses": "thesis", "crises": "crisis"}


def _plural(word: str) -> bool:
    return word in _IRREGULAR or (word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3)


def number_forms(word: str) -> frozenset[str]:
    """The word and the singulars and plurals its ending allows ("boxes" -> box, boxes; "copies" -> copy, copies;
    "children" -> child, children; "knives" -> knife, knives). Over-generating is harmless: a form that is no word
    is never written."""
    word = word.lower()
    singulars = {word, _IRREGULAR.get(word, word)}
    if word.endswith("ies") and len(word) > 4:
        singulars.add(word[:-3] + "y")
    if word.endswith("ves") and len(word) > 4:
        singulars |= {word[:-3] + "f", word[:-3] + "fe"}
    if word.endswith("es") and len(word) > 3:
        singulars.add(word[:-2])
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        singulars.add(word[:-1])
    plurals = {p for s in singulars for p in (s + "s", s + "es")}
    plurals |= {s[:-1] + "ies" for s in singulars if s.endswith("y")}
    plurals |= {k for k, v in _IRREGULAR.items() if v in singulars}
    return frozenset(singulars | plurals)


_BARE_COUNT = re.compile(rf"(?i)(?<![\w.:/-])(?!(?:19|20)\d\d\b){_COUNT_WORD}(?:\s*(?:[.,;:!?)](?!\d)|$)"
                         r"|\s+(?:in total|altogether|of them|all told)\b)")
