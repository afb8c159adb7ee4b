"""Long memories as passages: split by heading then paragraph, each passage searchable, the best one the snippet."""

from __future__ import annotations

from memory import runtime
from memory.domain.chunking import HEAD_CHARS, MAX_CHARS, passages
from memory.domain.requests import NodePatch
from memory.domain.search import SearchQuery
from memory.models import NodeRow, PassageRow
from memory.search import recall, vector_search
from memory.services import index_sync, node_update

SECTIONS = {
    "Installation": "Install the package with pip and run the init command once; it creates the home folder, "
                    "the token file and the index database next to your notes.",
    "Configuration": "Settings live in a TOML file. The port, the bind address and the log level can be changed "
                     "there; restart the server after editing it.",
    "Backups": "Every night a snapshot of the folder is written to the backups directory and the oldest ones "
               "are pruned so that seven remain.",
    "Sourdough": "Feed the sourdough starter twice a day with equal weights of rye flour and lukewarm water; it "
                 "is ready to bake with when it doubles within six hours and smells pleasantly sour.",
    "Upgrades": "Read the changelog before upgrading. Database migrations run on the first start of the new "
                "version and cannot be rolled back.",
    "Troubleshooting": "When the server does not start, look at the log file first. A stale lock file left by a "
                       "crash can be deleted once no process is running.",
}


def _document() -> str:
    body = []
    for heading, text in SECTIONS.items():
        body.append(f"## {heading}\n\n{text} " + " ".join(f"{heading} detail {i} is documented here." for i in
                                                             range(8)))
    return "\n\n".join(body)


def test_passages_split_at_headings_within_the_budget():
    content = _document()
    found = passages(content)
    assert len(found) >= len(SECTIONS)
    assert all(p.end - p.start <= MAX_CHARS for p in found)
    assert [p.ordinal for p in found] == list(range(1, len(found) + 1))
    starts = {content[p.start:p.end].split("\n")[0] for p in found}
    assert {f"## {h}" for h in SECTIONS} <= starts  # every section begins a passage
    covered = "".join(content[p.start:p.end] for p in found)
    assert "".join(content.split()) == "".join(covered.split())  # nothing is lost between passages
    assert passages("short note") == [] and passages("x" * HEAD_CHARS) == []


def test_a_paragraph_longer_than_the_budget_is_split_at_sentences():
    content = " ".join(f"Sentence number {i} talks about something else entirely." for i in range(60))
    found = passages(content)
    assert len(found) > 1 and all(p.end - p.start <= MAX_CHARS for p in found)
    assert all(content[p.start:p.end].endswith(".") for p in found)


def test_a_long_document_is_found_by_a_question_about_its_middle(mem):
    doc = mem(_document(), title="Notes app handbook", auto_link=False)
    for text in ("Bread recipes: a white loaf with instant yeast, proofed for an hour",
                 "Rye flour is stored in the second cupboard", "The bakery on the corner opens at seven"):
        mem(text, auto_link=False)
    row = NodeRow.objects.get(uid=doc.id)
    assert PassageRow.objects.filter(node=row).count() >= len(SECTIONS)
    question = "how often should I feed my starter and when is it ready for baking?"
    [top] = vector_search(runtime.embedder().embed_query(question), 1)
    assert top.row_id == row.id and top.passage >= 1
    hits = recall(query=SearchQuery(query=question, limit=3))
    [hit] = [h for h in hits if h.node_id == doc.id]
    assert "sourdough starter twice a day" in hit.snippet_text
    assert not hit.snippet_text.startswith("## Installation")


def test_passages_follow_edits_and_come_from_the_cache_on_rebuild(mem):
    doc = mem(_document(), title="Notes app handbook", auto_link=False)
    row = NodeRow.objects.get(uid=doc.id)
    before = set(PassageRow.objects.filter(node=row).values_list("text_hash", flat=True))
    edited = _document().replace("rye flour", "spelt flour")
    node_update(ref=doc.id, patch=NodePatch(content=edited))
    after = set(PassageRow.objects.filter(node=row).values_list("text_hash", flat=True))
    assert len(before - after) == 1  # only the changed passage got a new text
    report = index_sync(full=True, verify=True)  # every row and passage rewritten from the files
    assert report.embedded == 0  # own vectors and passages all come from the embedding cache
    row = NodeRow.objects.get(uid=doc.id)
    assert set(PassageRow.objects.filter(node=row).values_list("text_hash", flat=True)) == after
