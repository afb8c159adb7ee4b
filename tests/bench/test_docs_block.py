"""bench._common.write_block: a bench's --write / --write-docs replaces only the block between its two marker lines in
docs/benchmarks.md (session records written below its figures stay) and refuses, writing nothing, without them."""

import pytest

from bench._common import BENCH_DOC, block_markers, write_block
from bench.whisper_stores import SECTION, render

RESULTS = {"dev": {"prompts": 3, "inject": 2, "silent": 1, "hit_rate": 0.5, "hits": 1, "precision": 1.0, "correct": 1,
                   "injected": 1, "silence": 1.0, "silent_ok": 1, "p50": 40.0, "p95": 80.0}}
CATEGORIES = {"dev": {"library": (1, 2), "silent": (1, 1)}}

DOC = """# Benchmarks

## Whisper

### Whisper on the labelled stores

<!-- begin bench.whisper_stores -->
**Now:** the old figures.

| split | prompts |
|---|---|
| dev | 2 |

<!-- end bench.whisper_stores -->

**Session 11: a record.** Dev 0.621 -> 0.634.

**Session 14: another record.** Kept below the table.

### Whisper silence, session 14

More records.

## Web UI

Untouched.
"""


def test_writing_the_stores_figures_keeps_the_records_below_them(tmp_path):
    path = tmp_path / "benchmarks.md"
    path.write_text(DOC)
    write_block("whisper_stores", render(RESULTS, CATEGORIES, "Gate note.").removeprefix(SECTION + "\n"), path=path)
    text = path.read_text()
    assert "the old figures" not in text
    assert "| dev | 3 (2 inject, 1 silent) | 0.500 (1/2) | 1.000 (1/1) | 1.000 (1/1) | 40 / 80 |" in text
    assert text.count("### Whisper on the labelled stores") == 1
    before, after = DOC.split("<!-- end bench.whisper_stores -->")
    assert text.endswith("<!-- end bench.whisper_stores -->" + after)  # every record below, byte for byte
    assert text.startswith(before.split("**Now:**")[0])


@pytest.mark.parametrize("doc", [
    DOC.replace("<!-- begin bench.whisper_stores -->\n", ""),
    DOC.replace("<!-- end bench.whisper_stores -->\n", ""),
    DOC.replace("<!-- end bench.whisper_stores -->\n", "<!-- end bench.whisper_stores -->\n" * 2),
])
def test_without_exactly_one_pair_of_markers_it_refuses_and_writes_nothing(tmp_path, doc):
    path = tmp_path / "benchmarks.md"
    path.write_text(doc)
    with pytest.raises(SystemExit, match="<!-- begin bench.whisper_stores -->"):
        write_block("whisper_stores", "new figures", path=path)
    assert path.read_text() == doc


def test_the_repository_docs_mark_the_stores_figures_once():
    lines = [line.strip() for line in BENCH_DOC.read_text().splitlines()]
    begin, end = block_markers("whisper_stores")
    assert lines.count(begin) == 1 and lines.count(end) == 1
    assert lines[lines.index(begin) - 2] == SECTION


# The benches whose figures in docs/benchmarks.md are one generated block (session 16); those whose hand records sit
# inside their figures are listed in the doc's note and stay unmarked.
@pytest.mark.parametrize(("name", "heading"), [
    ("recall_quality", "## Recall quality"),
    ("whisper_ab", "### Whisper latency before and after"),
    ("sleep_cycle", "## Sleep cycle"),
    ("fit_scorer", "## Recall scorer (cross-validated)"),
    ("two_hosts", "## Two hosts on one PostgreSQL"),
    ("pg_beside", "## PostgreSQL beside SQLite"),
])
def test_the_repository_docs_mark_each_one_block_bench_under_its_heading(name, heading, tmp_path):
    lines = [line.strip() for line in BENCH_DOC.read_text().splitlines()]
    begin, end = block_markers(name)
    assert lines.count(begin) == 1 and lines.count(end) == 1 and lines.index(begin) < lines.index(end)
    assert lines[lines.index(begin) - 2] == heading
    copy = tmp_path / "benchmarks.md"
    copy.write_text(BENCH_DOC.read_text())
    write_block(name, "new figures", path=copy)  # does not refuse; the heading above and the records below stay
    after = copy.read_text().splitlines()
    assert after[after.index(begin) + 1] == "new figures" and after[after.index(begin) - 2] == heading
    assert len(after) == len(lines) - (lines.index(end) - lines.index(begin) - 1) + 2
