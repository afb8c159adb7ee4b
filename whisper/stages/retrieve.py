"""The search query, retrieval (hybrid recall plus identity support) and the minimum-score floor."""

from __future__ import annotations

import math
import re

from memory.domain.enums import Tier
from memory.domain.requests import ABOUT_SELF_TAG
from memory.domain.search import MAX_QUERY_CHARS, SearchHit, SearchQuery
from whisper.classifier import IDENTITY
from whisper.conf import WhisperConf
from whisper.conventions import governs_task, standouts
from whisper.state import SILENT_BELOW_FLOOR, SILENT_NO_CANDIDATES, STAGE_FLOOR, Candidate, Deps, WhisperRun
from whisper.asked import asked, sentences
from whisper.facts import names_focus, others_facts, question_facts
from whisper.text import (
    about_user, asks_about_user, owned_focus, question_focus, someone_elses,
)
from whisper.words import common_word

FOLLOW_UP_PROMPTS = 2
SELF_TAG = "self"
TOKEN_WORDS = re.compile(r"[\w.-]+")
PAGE_CHARS = 1000  # a memory longer than this is a page (imported documentation), not a note
# A page from outside the project lost this many log-odds per e-fold of its length until session 22, whose audit
# removed it (it cost right answers on dev 6-13; docs/whisper.md, "Rules audited on fresh batches (session 22)"):
# none now; bench/whisper_gate_fit.py's page re-weighing reads it as what the dump holds.
PAGE_PENALTY = 0.0
NAMED_PAGE_LIFT = 0.5  # log-odds given to a page the prompt names (docs/whisper.md, "The order of recall's hits")
NAME_WORDS = re.compile(r"[^\W_]+")
NAME_AFFIXES = ("python", "py")


def build_query(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """The prompt, or for a follow-up the last two prompts and this one."""
    query = run.prompt
    if run.follow_up and run.recent:
        query = " ".join([r.prompt for r in run.recent[-FOLLOW_UP_PROMPTS:]] + [run.prompt])
    run.query = " ".join(query.split())[-MAX_QUERY_CHARS:].strip()
    run.query_vec = run.prompt_vec if run.query == " ".join(run.prompt.split()) else deps.embed(run.query)
    run.identity_question = ((run.intent is not None and run.intent.has(IDENTITY))
                             or user_question(run.prompt) is not None)
    run.about_user = run.identity_question or about_user(run.prompt)
    return None


def further_queries(run: WhisperRun) -> list[str]:
    """What whisper searches with besides its query, each memory keeping its better hit (`retrieve`): for a
    follow-up whose query joined earlier prompts, the prompt alone (the joined text finds what the conversation is
    about; the prompt may still name its own topic, "and what about the api token?", which the joined text dilutes);
    for any other prompt that is context and then a question, its question sentences alone (`whisper.asked.asked`:
    recall weighs every word, and the context's words outweigh the question's). Session 14."""
    if run.follow_up and run.query != " ".join(run.prompt.split()):
        return [run.prompt[-MAX_QUERY_CHARS:]]
    question = asked(run.prompt)
    return [question] if question is not None else []


# A clause ends at a sentence's end or at a comma, semicolon or colon followed by white space.
_CLAUSE_END = re.compile(r"[,;:]\s+")
_FENCE = re.compile(r"^[ \t]*(?:```|~~~)", re.MULTILINE)


def user_question(prompt: str) -> str | None:
    """The part of a prompt that is a short question about a fact of the user's own (`asks_about_user`): the prompt
    itself, or one of its clauses when context comes around it ("the alv invite has to list who is up for
    re-election. when does my seat run out": the last sentence; "what's my blood type, the donor form needs it": its
    first clause); None when there is none. A prompt holding a fenced paste is not split: its question is about the
    paste ("…```FAILED …``` what am I missing"). Session 18's rule (2b46231), removed in session 21 and restored in
    session 22 on batch 13 dev (docs/whisper.md, "Rules audited on fresh batches (session 22)"); its "whats" read
    as "what's" (53267d9) stays removed."""
    if asks_about_user(prompt):
        return prompt
    if _FENCE.search(prompt):
        return None
    for sentence in sentences(prompt):
        for clause in _CLAUSE_END.split(sentence):
            if clause.strip() != prompt.strip() and asks_about_user(clause.strip()):
                return clause.strip()
    return None


def _space_factor(space: str | None, current: str | None, named: set[str], conf: WhisperConf) -> float:
    """1.0 for the current project, global memories and a project the prompt names; less for other projects."""
    if current is None or space is None or space == current or space.lower() in named:
        return 1.0
    return conf.space_factor_other


def page_names(title: str) -> list[frozenset[str]]:
    """The names a page goes by, each as its set of words: its title's lead (before a colon: "sqlparse" of
    "sqlparse: README", "Playwright CLI" of "Playwright CLI: tracing"), also without a "python"/"py" affix of the
    package-name kind ("python-dotenv" is imported as "dotenv", "markdown-it-py" as "markdown_it")."""
    lead = NAME_WORDS.findall(title.split(":", 1)[0].lower())
    names = [lead]
    if len(lead) > 1 and lead[0] in NAME_AFFIXES:
        names.append(lead[1:])
    if len(lead) > 1 and lead[-1] in NAME_AFFIXES:
        names.append(lead[:-1])
    return [frozenset(n) for n in names if n]


def names_page(words: set[str], *, title: str, text: str | None = None) -> bool:
    """Whether a prompt (its words; `text`: the prompt itself) names the page: every word of one of the page's names
    is in it. A one-word name that is an ordinary English word ("Requests", "rich") names the page only where the
    prompt writes it as a name (`written_as_name`): "how many requests per second …" is not about the library."""
    for name in page_names(title):
        if not name <= words:
            continue
        if text is None or len(name) > 1 or not common_word(next(iter(name))) or written_as_name(
                text, next(iter(name))):
            return True
    return False


# ---- names that are ordinary words ("rich", "docs"): read as names only where the prompt writes them as names

# Words that say the word beside them is a package or a tool ("the requests library", "import rich").
PACKAGE_WORDS = frozenset("library lib package module sdk import pip readme".split())


def written_as_name(text: str, word: str) -> bool:
    """Whether the text writes an ordinary word as a name somewhere: capitalised after the first word of its
    sentence ("… using Rich"), in code (`rich`, "requests.get"), or beside a word that says it is a package ("the
    requests library", "import rich")."""
    tokens = re.findall(r"[\w.`'\"-]+|[!?;:]", text)
    low = word.lower()
    for i, token in enumerate(tokens):
        core = token.rstrip(".")
        inner = core.strip("`'\"").lower()
        if inner != low and not inner.startswith(low + "."):
            continue
        if core[:1] in "`'\"" or inner != low:
            return True  # quoted, in backticks, or an attribute of it ("requests.get")
        if core[:1].isupper() and i > 0 and not tokens[i - 1].endswith((".", "!", "?", ";", ":")):
            return True
        if {t.lower().rstrip(".") for t in tokens[max(0, i - 1): i + 2: 2]} & PACKAGE_WORDS:
            return True
    return False


def prompt_names(text: str) -> set[str]:
    """The prompt's words (lowercase, "." and "-" kept inside), among them the projects it names (session 11's reading
    of a project named by an ordinary word after a determiner, "the docs site", as that word was removed in session
    22: docs/whisper.md, "Rules audited on fresh batches (session 22)")."""
    return {t.lower() for t in TOKEN_WORDS.findall(text)}


def named_project(others: set[str]) -> str | None:
    """The one other project a prompt names, or None (session 12's preference for a project named by an invented
    word among several was removed in session 22: docs/whisper.md, "Rules audited on fresh batches (session 22)")."""
    return next(iter(others)) if len(others) == 1 else None


def names_a_project(others: set[str], named: set[str], spaces: frozenset[str]) -> bool:
    """Whether the prompt names a project (another one, or any space among its words): a first-person question that
    does ("what ORM did I pick for loafbook") asks about the project, not the user."""
    return bool(others) or any(s.lower() in named for s in spaces)


def page_probability(probability: float, *, chars: int, named: bool = False) -> float:
    """Recall's probability as whisper weighs it: a page (longer than PAGE_CHARS) the prompt names (`names_page`:
    "does httpx-sse reconnect ...?" asked in a project) is what the prompt is about, which recall's scorer cannot
    see (it weighs the words a page shares, not whether the prompt names it): it gains NAMED_PAGE_LIFT log-odds.
    Any other hit keeps recall's probability (session 10's weighing down of a page from outside the project was
    removed in session 22: docs/whisper.md, "The order of recall's hits")."""
    if chars <= PAGE_CHARS or not named or not 0.0 < probability < 1.0:
        return probability
    z = math.log(probability / (1.0 - probability)) + NAMED_PAGE_LIFT
    return 1.0 / (1.0 + math.exp(-z))


def _candidate(hit: SearchHit, rank: int | None, *, source: str, identity: bool, conf: WhisperConf,
               current_space: str | None, named: set[str], text: str) -> Candidate:
    # A long memory is represented by the passage that matched (docs/whisper.md): overlap and text read that.
    words = {w for token in named for w in NAME_WORDS.findall(token)}
    weighed = page_probability(hit.score, chars=len(hit.content), named=names_page(words, title=hit.title, text=text))
    return Candidate(
        node_id=hit.node_id, short_id=hit.short_id, title=hit.title, content=hit.snippet_text, type=hit.type,
        space=hit.space, confidence=hit.confidence, created=hit.created, retrieval_rank=rank,
        retrieval_score=round(hit.score, 4), raw_cosine=None, score=weighed, identity=identity, source=source,
        probability=None if source == "identity" else weighed,
        space_factor=_space_factor(hit.space, current_space, named, conf), hit=hit,
    )


def retrieve(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Hybrid recall over core and working (not counted as use), plus identity memories for identity prompts."""
    space = run.request.space
    text = run.query or run.prompt
    by_text = run.identity_question and not (run.intent is not None and run.intent.has(IDENTITY))
    spaces = deps.spaces() if space is not None or by_text else frozenset()
    named = prompt_names(text)
    # Asking about another project by name ("how does routewise store times?") scores against that project.
    others = {s for s in spaces if s != space and s.lower() in named} if space is not None else set()
    target = named_project(others) or space
    run.target_space = target
    if by_text and names_a_project(others, named, spaces):
        run.identity_question = False  # "what ORM did I pick for loafbook" asks about a project, not the user
    query = SearchQuery(query=run.query or run.prompt, limit=conf.search_limit, tiers=[Tier.CORE, Tier.WORKING],
                        default_space=target, min_score=0.0, activation=conf.activation)
    plain: list[SearchHit] = []
    hits = _search(query, conf, deps, plain)
    # A follow-up's prompt alone, a question after context alone (`further_queries`): each memory its better hit.
    for text in further_queries(run):
        hits = _better_of(hits, _search(query.model_copy(update={"query": text}), conf, deps), conf.search_limit)
    if space is not None and target == space and not others and not any(
            h.fts_rank == 1 and h.space in (space, None) for h in plain):  # else BM25's first is this project's
        hits = _better_of(hits, _described_elsewhere(query, space, deps), conf.search_limit)
    if any(SELF_TAG in h.tags for h in hits):  # only then ask which one is the self node
        excluded = deps.self_ids()
        hits = [h for h in hits if h.node_id not in excluded]
    # Identity-linked: the self node defines it (loaded when the prompt is about the user or is a task a preference
    # shapes), or it is tagged so.
    identity_hits = deps.identity() if run.about_user or governs_task(run.prompt) else []
    # Standouts pass only at the logistic gate (standout_gate); a reranker or GATE_WEIGHTS=off never measured them.
    run.standouts = standouts(run, deps, identity_hits, conf) if conf.gate_weights and deps.reranker is None else {}
    run.identity_ids = frozenset(h.node_id for h in identity_hits) | {
        h.node_id for h in hits if ABOUT_SELF_TAG in h.tags}
    pairs = [(h, _candidate(h, i + 1, source="temporal" if h.source == "temporal" else "search",
                            identity=h.node_id in run.identity_ids, conf=conf, current_space=space, named=named,
                            text=text))
             for i, h in enumerate(hits)]
    seen = {h.node_id for h in hits}
    _off_focus(run, pairs)
    if run.identity_question or (run.intent is not None and run.intent.has(IDENTITY)):
        extra = [h for h in identity_hits if h.node_id not in seen]
    else:  # a task a convention shapes brings that convention when it stands out (whisper.conventions); session 9's
        # preference task, which brought every preference on a request, was removed in session 22 (docs/whisper.md,
        # "Rules audited on fresh batches (session 22)")
        extra = [h for h in identity_hits if h.node_id not in seen and h.node_id in run.standouts]
    extra_pairs = [(h, _candidate(h, None, source="identity", identity=True, conf=conf, current_space=space,
                                  named=named, text=text)) for h in extra]
    _off_focus(run, extra_pairs)
    pairs += extra_pairs
    # Recall already has the cosine of every hit its vector leg found: read stored vectors only for the others.
    missing = [h.row_id for h, _ in pairs if h.raw_cosine is None]
    found = deps.cosines(run.query_vec, missing) if run.query_vec is not None and missing else {}
    for hit, cand in pairs:
        if hit.raw_cosine is not None:
            cand.raw_cosine = round(hit.raw_cosine, 4)
        elif hit.row_id in found:
            cand.raw_cosine = round(found[hit.row_id], 4)
        if cand.source == "identity":
            cand.score = cand.raw_cosine or 0.0
    # Those still on the identity route first: a memory off the question's focus must not take their place.
    identity_extra = sorted((c for _, c in pairs if c.source == "identity"), key=lambda c: (not c.identity, -c.score))
    run.candidates = [c for _, c in pairs if c.source != "identity"] + identity_extra[: conf.search_limit]
    run.pool = list(run.candidates)
    return None if run.pool else SILENT_NO_CANDIDATES


def _focus_applies(run: WhisperRun) -> bool:
    """The whole focus rule holds for a question found by the text rule alone: one the identity archetypes recognise
    ("what do I do for a living") keeps its identity memories whatever words they use ("works at …"), and only the
    ownership check (`_given_away`) holds for it."""
    return run.identity_question and not (run.intent is not None and run.intent.has(IDENTITY))


def _users_words(question: str, focus: set[str]) -> set[str]:
    """The focus words a question about the user asks of the user's own: those after "my", and on a first-person
    question every one it does not give to someone else ("how many kids do I have?" -> {"kid"}; "what should I get
    Jonas for his birthday?" -> not "birthday")."""
    words = owned_focus(question)
    if about_user(question):
        words |= {w for w in focus if not someone_elses(question, w)}
    return words


def _given_away(question: str, words: set[str], hit: SearchHit, cand: Candidate) -> bool:
    """Whether a memory gives what a question asks of the user to someone else: it names one of the user's words
    only as another's ("My sister has two kids", a note titled "Brother's car"), or the kind of fact asked for
    only as another's ("where do I live?" and "My parents live in …"; `whisper.facts.others_facts`)."""
    text = f"{cand.title} {cand.content}"
    if any(someone_elses(text, w) for w in words):
        return True
    facts = question_facts(question) if about_user(question) else set()
    return bool(facts & others_facts(cand.content, (cand.title, *hit.tags)))


def _better_of(hits: list[SearchHit], more: list[SearchHit], limit: int) -> list[SearchHit]:
    """Both lists' memories, each with its better hit, the best `limit` by score."""
    best = {h.node_id: h for h in hits}
    for h in more:
        if h.node_id not in best or h.score > best[h.node_id].score:
            best[h.node_id] = h
    return sorted(best.values(), key=lambda h: -h.score)[:limit]


def _search(query: SearchQuery, conf: WhisperConf, deps: Deps, plain: list[SearchHit] | None = None
            ) -> list[SearchHit]:
    """Recall; for a prompt scored against a project (`conf.project_pass`) also recall over that project and the
    global memories alone (docs/whisper.md, "The per-project pass"). `plain` receives the first recall's hits (over
    every space: their BM25 ranks are the whole store's)."""
    hits = deps.search(query)
    if plain is not None:
        plain.extend(hits)
    if not conf.project_pass or query.default_space is None:
        return hits
    return _better_of(hits, deps.search(query.model_copy(update={"spaces": [query.default_space, None]})),
                      query.limit)


def _described_elsewhere(query: SearchQuery, space: str, deps: Deps) -> list[SearchHit]:
    """On a prompt asked in a project that names no other one, the note of another project whose words match the
    prompt best of all (BM25's first over every space), with the probability recall gives it when no project is
    preferred: a prompt may describe the other project instead of naming it ("when does the water at the plots go
    on", asked in a work project), and scored against its own project the other project's note drops out of the
    pool. A page (over PAGE_CHARS) never: imported documentation shares words with many prompts it does not
    answer (docs/benchmarks.md, "Whisper retrieval, session 18"). Not asked when the first recall already shows
    BM25's first to be the project's own or a global memory (the call in `retrieve`)."""
    hits = deps.search(query.model_copy(update={"default_space": None}))
    return [h for h in hits if h.fts_rank == 1 and h.space not in (space, None) and len(h.content) <= PAGE_CHARS]


def _off_focus(run: WhisperRun, pairs: list[tuple[SearchHit, Candidate]]) -> None:
    """On a question about one fact of the user's, an identity memory that does not name what the question asks
    about, by its word or, for a general word, the kind of fact (`whisper.facts.names_focus`: "what's my job?" and
    "Works at …"; "what's my cat's name?" -> "cat": not the user's name memory, which shares only "name"), or gives
    it only to someone else (`_given_away`: "when's my birthday?" and "Jonas's birthday is 9 March"; "where do I
    live?" and "My parents live in …"), leaves the identity route and its low cosine gate: it is judged as any other
    memory (recall's gate, or a strong cosine). A question the identity archetypes recognise gets the ownership
    check only."""
    if not run.identity_question:
        return
    whole = _focus_applies(run)
    # A follow-up's question: the prompts it joins; a question about the user inside context: that clause alone.
    clause = None if run.follow_up else user_question(run.prompt)
    question = clause or run.query or run.prompt
    focus = question_focus(question)
    if whole and not focus:
        return
    words = _users_words(question, focus)
    for hit, cand in pairs:
        if cand.identity and ((whole and not names_focus(question, cand.content, (cand.title, *hit.tags)))
                              or _given_away(question, words, hit, cand)):
            cand.identity = False


def score_floor(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Keep candidates whose probability (identity memories: cosine) reaches the floor; identity memories on a
    prompt about the user stay whatever their score."""
    floor = conf.min_score

    def signal(c: Candidate) -> float:
        return c.probability if c.probability is not None else (c.raw_cosine or 0.0)

    keep = [c for c in run.pool if signal(c) >= floor or (c.identity and run.about_user)]
    run.drop(keep, STAGE_FLOOR)
    return None if run.pool else SILENT_BELOW_FLOOR
