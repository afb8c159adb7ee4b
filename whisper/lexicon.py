"""The words people use for the facts a memory tool keeps about its user (issue 11, item 9; docs/whisper.md).

Pure data, no Django, no I/O; `whisper.text` (PHRASES) and `whisper.facts` (FACTS, OTHER_PEOPLE) read it.
Written from general knowledge, not from any store or prompt.
(Session 10's `SAME_FACT`, words naming one fact in other words folded to one token, was removed in session 22.)

* `FACTS`: kinds of personal fact. A question asks for one by a general word ("what are my pets called?", "what's my
  job?"); a note holds one in many ways ("Our dog Pixel …", "I work as a nurse …"). A general word of a question
  meets a note that holds that kind of fact; a *specific* word ("cat", "vegan", "asthma") is a fact of its own and
  must be met by that word, so "what's my cat's name?" never meets a note about a dog.

Only kinds of fact a test on a real store shows gained are here (tests/whisper/test_fact_lexicon.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Fact:
    """A kind of personal fact: the general words a question asks for it by, the specific values that are facts of
    their own, and what else a note holding it says (a regular expression over its lowercased text)."""

    name: str
    asked: tuple[str, ...]
    kinds: tuple[str, ...] = ()
    said: str = ""
    asked_phrases: str = ""  # a question's phrases that ask for it without a general word ("do I work")
    relation: bool = False  # the fact is another being of the user's (a pet), not the user


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


FACTS = (
    Fact("job", _words("job jobs occupation profession career employer employers"),
         said=r"employed|employee|hired|works? (?:as|at|for)|worked (?:as|at|for)|working (?:as|at|for)|"
              r"freelanc\w*|self-employed|salary|promot(?:ed|ion)|my boss|retired",
         asked_phrases=r"(?:do|did) i work\b"),
    Fact("home", _words("home live lives based city town reside residence neighbourhood neighborhood apartment flat "
                        "house address located"),
         # rent only of a home: "I pay the rent for the office" holds no home
         said=r"lives?|lived|living in|based in|moved (?:to|into|here)|relocated|(?:my|our) rent|mortgage|my home|"
              r"home is|rent(?:s|ed|ing)? (?:a|an|my|our) (?:[\w-]+ ){0,3}?(?:room|studio|place|bedsit|cottage)",
         asked_phrases=r"where (?:do|did) i (?:live|stay)"),
    Fact("origin", _words("hometown nationality citizenship origin originally heritage grew raised"),
         said=r"grew up|raised in|originally from|(?:i'm|i am|come) from|born in|citizen|passport",
         asked_phrases=r"where (?:am|was) i from|where did i grow up"),
    Fact("pets", relation=True, asked=_words("pet pets animal animals"),
         kinds=_words("cat cats kitten kittens dog dogs puppy puppies rabbit rabbits hamster hamsters parrot "
                      "parrots budgie tortoise turtle horse horses goldfish lizard ferret guinea"),
         said=r"vet|adopted"),
    Fact("diet", _words("diet dietary food foods eat eating meal meals"),
         kinds=_words("vegetarian vegan pescatarian gluten coeliac celiac lactose dairy meat pork beef halal kosher "
                      "allergy intolerant intolerance nut nuts peanut peanuts shellfish teetotal alcohol"),
         said=r"(?:don't|do not|can't|cannot|never) eat"),
    Fact("health", _words("health medical condition conditions medication doctor illness diagnosis"),
         kinds=_words("asthma diabetes diabetic migraine migraines allergy inhaler insulin surgery injury "
                      "cholesterol physio therapist dentist glasses"),
         said=r"diagnosed|prescribed|\d+ ?(?:mg|mcg)\b|blood pressure|hospital|clinic"),
    Fact("languages", _words("language languages speak fluent tongue"),
         kinds=_words("english dutch french german spanish portuguese italian mandarin cantonese chinese japanese "
                      "korean arabic hindi urdu russian polish turkish greek swedish danish norwegian finnish "
                      "hebrew farsi persian swahili catalan welsh irish"),
         said=r"speak\w*|native|bilingual|mother tongue"),
    Fact("car", _words("car cars vehicle"),
         kinds=_words("van motorbike motorcycle scooter toyota honda ford volkswagen skoda tesla bmw audi mercedes "
                      "volvo renault peugeot fiat kia hyundai nissan mazda subaru citroen"),
         said=r"(?:i|we) drive|drives? an?|electric vehicle"),
    Fact("hobbies", _words("hobby hobbies pastime pastimes sport sports leisure fun"),
         kinds=_words("climbing bouldering running marathon cycling swimming hiking yoga pilates gym football soccer "
                      "tennis badminton squash basketball volleyball rugby cricket golf chess guitar piano violin "
                      "drums painting drawing knitting sewing photography gardening baking gaming surfing skiing "
                      "sailing rowing dancing singing choir pottery woodworking birdwatching"),
         # not "club", "team", "every Monday": a job has them too ("I lead the platform team at …")
         said=r"(?:i|we) play|lessons",
         asked_phrases=r"(?:free|spare) time|for fun|at the weekends?"),
    Fact("contact", _words("email phone contact mobile"),
         # a phone number after "+" or a phone word, never a span of years ("2019 - 2023"); "cell" alone is no phone
         # ("cell B4 of the budget sheet")
         said=r"[\w.+-]+@[\w-]+\.[\w.]+|"
              r"(?:(?<=\+)|(?:phone|mobile|cell|tel)(?:\W+(?:number|no|nr|is))*\W{0,3})"
              r"(?!(?:19|20)\d\d\s*[-\u2013]\s*(?:19|20)\d\d)\d[\d ()-]{7,}\d"),
    Fact("education", _words("study studied university uni college degree school education graduate graduated "
                             "major diploma"),
         kinds=_words("bachelor bachelors master masters phd doctorate mba"),
         said=r"thesis|alumn\w*|graduat\w*"),
)


# Phrases read as one word before a text is split into words ("what do I do for a living" asks for a job, not
# where the user lives).
PHRASES = ((re.compile(r"\bfor a living\b", re.IGNORECASE), "job"),
           (re.compile(r"\bmother tongue\b", re.IGNORECASE), "language"))

# Words naming another person a note may be about ("My sister works as a nurse"): a fact said after one of them in
# the same sentence is not the user's.
OTHER_PEOPLE = frozenset("""
partner partners wife wives husband husbands spouse girlfriend boyfriend fiance fiancee mother mum mom father dad
parent parents sister sisters brother brothers sibling siblings son sons daughter daughters child children kid kids
friend friends colleague colleagues boss manager neighbour neighbor neighbours neighbors cousin aunt uncle niece
nephew grandmother grandfather grandma grandpa granny grandson granddaughter
""".split())
