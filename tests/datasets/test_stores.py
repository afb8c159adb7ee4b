"""The labelled stores of bench/datasets/: they load, every label points at a memory, the split is the seeded one
and stays put when queries are added."""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import Counter

import pytest

from bench.datasets.check import check_data, check_store
from bench.datasets.loader import ALL_STORES, STORES, load_store, raw_store, to_recall_dataset
from bench.datasets.split import SEED, assign_splits


# The stores whisper batches 1-15 were written over (batch 16 adds home).
FOUR_STORES = ("docs", "lifelog", "devprojects", "club")


@pytest.mark.parametrize("name", ALL_STORES)
def test_store_passes_the_checker(name):
    errors, counts = check_store(name)
    assert errors == []
    assert sum(counts.values()) >= 40


def test_at_least_150_labelled_queries_split_dev_and_test():
    splits = Counter(q["split"] for name in STORES for q in raw_store(name)["queries"])
    assert splits["dev"] + splits["test"] >= 150
    # the seeded split halves each store by chance: 133 dev / 118 test over the five stores, a difference of 15,
    # about one standard deviation of an even split (the square root of 251 queries); the bound is two
    assert abs(splits["dev"] - splits["test"]) <= 2 * (splits["dev"] + splits["test"]) ** 0.5


def test_docs_are_read_from_the_installed_packages_with_long_documents():
    store = load_store("docs")
    sizes = sorted(len(m["content"].encode()) for m in store.memories)
    assert all(size > 500 for size in sizes)
    assert sum(size > 8_000 for size in sizes) >= 8  # long documents: chunking matters
    middle = [q for q in store.queries if q.category == "middle"]
    assert len(middle) >= 15
    by_key = {m["key"]: m for m in store.memories}
    for q in middle:
        text = by_key[q.relevant[0]]["content"]
        assert 0.25 <= text.find(q.anchor) / len(text) <= 0.75, q.id


def test_checker_finds_a_dangling_label_and_a_moved_split():
    data = copy.deepcopy(raw_store("lifelog"))
    data["queries"][0]["relevant"] = ["l999"]
    data["queries"][1]["split"] = "test" if data["queries"][1]["split"] == "dev" else "dev"
    errors, _ = check_data("lifelog", data, resolve=False)
    assert any("'l999' does not exist" in e for e in errors)
    assert any(data["queries"][1]["id"] in e and "seeded split" in e for e in errors)


def test_checker_finds_an_anchor_missing_from_its_document():
    data = copy.deepcopy(raw_store("docs"))
    data["queries"][0]["anchor"] = "this sentence is in no installed document"
    errors, _ = check_data("docs", data)
    assert any("anchor" in e and data["queries"][0]["id"] in e for e in errors)


def test_split_is_pinned_balanced_and_stable_when_queries_are_added():
    queries = raw_store("devprojects")["queries"]
    split = assign_splits("devprojects", queries, seed=SEED)
    assert split == assign_splits("devprojects", list(reversed(queries)), seed=SEED)  # order does not matter
    assert {q["id"]: q["split"] for q in queries} == split
    for category in {q["category"] for q in queries}:
        n = Counter(split[q["id"]] for q in queries if q["category"] == category)
        assert 0 <= n["dev"] - n["test"] <= 1
    grown = [*queries, *({"id": f"new{i}", "category": "project"} for i in range(3))]
    moved = [qid for qid, s in assign_splits("devprojects", grown, seed=SEED).items() if qid in split and s != split[qid]]
    assert len(moved) <= 2  # three additions in the same batch shift the cut by at most a query or two
    later = [*queries, *({"id": f"new{i}", "category": "project", "batch": 2} for i in range(3))]
    relabelled = assign_splits("devprojects", later, seed=SEED)
    assert {qid: relabelled[qid] for qid in split} == split  # a later batch is cut on its own: nothing earlier moves
    assert sorted(relabelled[f"new{i}"] for i in range(3)) == ["dev", "dev", "test"]
    assert assign_splits("devprojects", queries, seed=SEED + 1) != split  # the seed is what fixes it


def test_recall_dataset_view_keeps_answerable_queries_of_one_split():
    store = load_store("lifelog")
    ds = to_recall_dataset(store, "dev")
    assert ds.queries and all(q.relevant for q in ds.queries)
    dev_ids = {q.id for q in store.queries_in("dev")}
    assert {q.id for q in ds.queries} <= dev_ids
    offtopic_dev = [q for q in store.queries_in("dev") if not q.answerable]
    assert offtopic_dev and all(q.category == "offtopic" for q in offtopic_dev)
    assert ds.now == store.now and len(ds.memories) == len(store.memories)


def test_whisper_scenarios_pass_the_checker_and_cover_every_kind_of_prompt():
    from bench.datasets.check import check_whisper
    from bench.datasets.loader import load_whisper, raw_whisper

    errors, counts = check_whisper(raw_whisper())
    assert errors == []
    scenarios = load_whisper()
    assert len(scenarios.prompts) >= 250
    cats = Counter(p["category"] for p in scenarios.prompts)
    for cat in ("project", "cross_project", "identity", "follow_up", "paraphrase", "near_miss", "machine", "docs"):
        assert cats[cat] >= 10, cat
    for split in ("dev", "test"):
        assert {p["kind"] for p in scenarios.prompts_in(split)} == {"inject", "silent"}
        assert counts[(split, "inject")] >= 60


def test_whisper_checker_finds_a_dangling_label():
    from bench.datasets.check import check_whisper
    from bench.datasets.loader import raw_whisper

    data = copy.deepcopy(raw_whisper())
    data["prompts"][0]["expect"] = ["p999"]
    errors, _ = check_whisper(data)
    assert any("'p999' does not exist" in e for e in errors)


# Earlier batches as the session that closed them left them (ids, text, labels, splits): a later round adds prompts,
# never edits these. Batches 1-2 as session 10 left them; 1-3 as session 11 left them; 1-4 as session 12 left them;
# 1-5 as session 13 left them; 1-6 as session 14 left them; 1-7 as session 15 left them; 1-8 as session 16 left them
# (batch 8 with wn213 as reworded in 4747ed7); 1-9 as session 17 left them (2b59515); 1-10 as session 18 left them
# (batch 10 with wq150 and wp252 as reworded in b5c556f); 1-11 as session 19 left them (batch 11 after its second
# reading, ddd26c8); 1-12 as session 20 left them (batch 12, still sealed, after its second reading by label12);
# 1-13 as session 21 left them (batch 13, still sealed, after its second reading by label13); 1-14 as session 22 left
# them (batch 14 after its second reading by label14; session 23 opened it without an edit).
EARLIER_BATCHES_SHA256 = {
    2: (368, "90d5f006de56c00b2d3bb9e246f84ecf6ae96294b212988c3bd2a2abb8cafa29"),
    3: (486, "c69318ad26c7fe74cdc86ee3c4407117e9f403b704e03333e2ae0c4a48e8213d"),
    4: (610, "e62e889365769ba1fff2da9aec3ba8a5aae226372f0e167a657ba5ac2e30565f"),
    5: (776, "e3b08b9b16a6473ea1836b29453e69258326e12f0ad073fe28efb0124cbd71db"),
    6: (915, "39e3f996dc9f6948b2ef45eab1a591e21c8d87d75c3718a9d7f9ce5635393a3b"),
    7: (1049, "6088e375959c5fdf44982b7ee13163fcf36ac98e08e02d592990d26adfe890d0"),
    8: (1194, "561727388743b2a4c1e65e009d392b661c19df14cc380aa549f07b89123c8fc8"),
    9: (1349, "082c4d9a725dfb4febe3c9f1113d66bd0f2b6c42166427ee0b9bc8f2db8e4329"),
    10: (1503, "4709f2151c3ff4094f42dbdb4a7100baff59b5dc4a4ea977060a4c721ba49f35"),
    11: (1655, "522a9e2b9ccf6ae67ddd910c322c4b0ee523797046580c48ecc74e24e632f581"),
    12: (1807, "8e849206056eb0f5a838584c47209fcc9fae4be7667a555af65d1cc4e73d22d5"),
    13: (1959, "a5c3084f5eb74f72f08aec8fd4f268859f3f959bc998ba693f47c49004c04e5b"),
    14: (2111, "b59ded2f86addae016d84998ce764185455185945231cc2903093a2b217d1022"),
    15: (2263, "539a2a5142ed47766333d75c94e5ce337883a0c695b6ebfb5ee8dbae5c7222f1"),
}

# The stores the whisper batches 1-6 were labelled against (memories, edges, queries, splits): docs, lifelog and
# devprojects as session 13 left them, club as session 14 left it. The labels of those batches point into them, so
# an edit to any memory or query fails here.
EARLIER_STORES_SHA256 = {
    "docs": (41, 48, "6edd273c59baa5d242c6708f99115582e4d18ea7db775a1ec8ad19b99dadab78"),
    "lifelog": (72, 65, "825fa8ba9e3ef1c52ce9886dda3cdaf2d0ccddaa12851cd981426b85a274768d"),
    "devprojects": (55, 56, "3dc8ee8935a958afc22b1960b525a6d2b353e748f5710af4ce83bbdaa9b18175"),
    "club": (42, 41, "e781a80b052ce17bfd9a60e26ccb8a85df770ace40a75142c0220a1c819d4778"),
}


def _digest(prompts: list[dict]) -> str:
    ordered = sorted(prompts, key=lambda p: p["id"])
    return hashlib.sha256(json.dumps(ordered, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@pytest.mark.parametrize("last", sorted(EARLIER_BATCHES_SHA256))
def test_whisper_earlier_batches_are_unchanged(last):
    from bench.datasets.loader import raw_whisper

    earlier = [p for p in raw_whisper()["prompts"] if int(p.get("batch", 1)) <= last]
    count, digest = EARLIER_BATCHES_SHA256[last]
    assert len(earlier) == count
    assert _digest(earlier) == digest


@pytest.mark.parametrize("name", sorted(EARLIER_STORES_SHA256))
def test_earlier_stores_are_unchanged(name):
    data = raw_store(name)
    memories, queries, digest = EARLIER_STORES_SHA256[name]
    assert (len(data["memories"]), len(data["queries"])) == (memories, queries)
    assert hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest() == digest


def test_earlier_pins_fail_on_an_edited_prompt_or_memory():
    from bench.datasets.loader import raw_whisper

    prompts = copy.deepcopy([p for p in raw_whisper()["prompts"] if int(p.get("batch", 1)) <= 6])
    prompts[-1]["prompt"] += " "
    assert _digest(prompts) != EARLIER_BATCHES_SHA256[6][1]
    data = copy.deepcopy(raw_store("lifelog"))
    data["memories"][0]["content"] += " "
    assert hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest() \
        != EARLIER_STORES_SHA256["lifelog"][2]


def test_whisper_batch_three_is_cut_among_itself():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    third = [p for p in data["prompts"] if p.get("batch") == 3]
    assert len(third) == 118
    split = assign_splits(data["name"], third, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in third} == split
    assert Counter(split.values()) == {"dev": 61, "test": 57}


def test_whisper_batch_four_is_cut_among_itself():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    fourth = [p for p in data["prompts"] if p.get("batch") == 4]
    assert len(fourth) == 124
    split = assign_splits(data["name"], fourth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in fourth} == split
    assert Counter(split.values()) == {"dev": 64, "test": 60}


def test_whisper_batch_five_is_cut_among_itself_and_covers_every_kind():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    fifth = [p for p in data["prompts"] if p.get("batch") == 5]
    assert len(fifth) == 166
    split = assign_splits(data["name"], fifth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in fifth} == split
    assert Counter(split.values()) == {"dev": 86, "test": 80}
    cats = Counter(p["category"] for p in fifth)
    minimum = {"project": 30, "cross_project": 12, "identity": 12, "personal": 20, "paraphrase": 25,
               "follow_up": 14, "docs": 6, "near_miss": 25}
    assert all(cats[c] >= n for c, n in minimum.items()), cats
    other_silent = sum(n for c, n in cats.items() if c not in minimum)
    assert other_silent >= 10
    assert all(1 <= len(p["history"]) <= 2 for p in fifth if p["category"] == "follow_up")


def test_whisper_batch_six_is_cut_among_itself_and_covers_the_fourth_store():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    assert data["stores"][:4] == ["docs", "lifelog", "devprojects", "club"]  # the home store (batch 16) follows
    sixth = [p for p in data["prompts"] if p.get("batch") == 6]
    assert len(sixth) == 139
    split = assign_splits(data["name"], sixth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in sixth} == split
    assert Counter(split.values()) == {"dev": 72, "test": 67}
    club_keys = {m["key"] for m in raw_store("club")["memories"]}
    on_club = [p for p in sixth if p["space"] == "kalkzak" or set(p.get("expect", [])) & club_keys]
    assert len(on_club) >= 70
    silent = Counter(p["category"] for p in sixth if p["kind"] == "silent")
    assert silent["near_miss"] >= 25 and sum(silent.values()) - silent["near_miss"] >= 14
    assert all(1 <= len(p["history"]) <= 2 for p in sixth if p["category"] == "follow_up")


def test_club_store_has_a_space_superseded_facts_and_its_own_key_prefix():
    store = load_store("club")
    assert len(store.memories) >= 40 and all(m["key"].startswith("c") for m in store.memories)
    assert {m["space"] for m in store.memories} == {None, "kalkzak"}
    outdated = {m["key"] for m in store.memories if m["valid_until"]}
    assert len(outdated) >= 2
    assert outdated <= {e["target"] for e in store.edges if e["edge"] == "evolved_from"}


def test_whisper_batch_seven_is_cut_among_itself_over_all_four_stores():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    seventh = [p for p in data["prompts"] if p.get("batch") == 7]
    assert len(seventh) == 134
    split = assign_splits(data["name"], seventh, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in seventh} == split
    assert Counter(split.values()) == {"dev": 70, "test": 64}
    assert Counter(p["category"] for p in seventh) == {
        "project": 23, "cross_project": 8, "identity": 10, "personal": 17, "paraphrase": 16, "follow_up": 10,
        "docs": 6, "near_miss": 27, "machine": 5, "acknowledgement": 3, "chit_chat": 2, "off_topic": 4, "repeat": 3}
    assert Counter(p["kind"] for p in seventh) == {"inject": 90, "silent": 44}
    store_of = {m["key"]: name for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(store_of[k] for p in seventh for k in p.get("expect", []))
    assert all(expected_stores[name] >= 6 for name in FOUR_STORES), expected_stores
    assert all(1 <= len(p["history"]) <= 2 for p in seventh if p["category"] in ("follow_up", "repeat"))
    earlier = {p["id"] for p in data["prompts"] if int(p.get("batch", 1)) < 7}
    assert earlier.isdisjoint(p["id"] for p in seventh)


def test_whisper_batch_eight_is_cut_among_itself_and_repeats_no_earlier_prompt():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    eighth = [p for p in data["prompts"] if p.get("batch") == 8]
    assert len(eighth) == 145
    split = assign_splits(data["name"], eighth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in eighth} == split
    assert Counter(split.values()) == {"dev": 77, "test": 68}
    assert Counter(p["category"] for p in eighth) == {
        "project": 20, "cross_project": 7, "identity": 13, "personal": 20, "paraphrase": 21, "follow_up": 9,
        "docs": 6, "near_miss": 29, "machine": 9, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3, "repeat": 3}
    assert Counter(p["kind"] for p in eighth) == {"inject": 96, "silent": 49}
    store_of = {m["key"]: name for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(store_of[k] for p in eighth for k in p.get("expect", []))
    assert all(expected_stores[name] >= 6 for name in FOUR_STORES), expected_stores
    assert all(1 <= len(p["history"]) <= 2 for p in eighth if p["category"] in ("follow_up", "repeat"))
    earlier = [p for p in data["prompts"] if int(p.get("batch", 1)) < 8]
    assert {p["id"] for p in earlier}.isdisjoint(p["id"] for p in eighth)
    said_before = {" ".join(p["prompt"].lower().split()) for p in earlier}
    assert not [p["id"] for p in eighth if " ".join(p["prompt"].lower().split()) in said_before]


def test_whisper_batch_nine_is_cut_among_itself_and_repeats_no_earlier_prompt():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    ninth = [p for p in data["prompts"] if p.get("batch") == 9]
    assert len(ninth) == 155
    split = assign_splits(data["name"], ninth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in ninth} == split
    assert Counter(split.values()) == {"dev": 81, "test": 74}
    assert Counter(p["category"] for p in ninth) == {
        "project": 23, "cross_project": 8, "identity": 14, "personal": 20, "paraphrase": 22, "follow_up": 9,
        "docs": 7, "near_miss": 31, "machine": 10, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3, "repeat": 3}
    assert Counter(p["kind"] for p in ninth) == {"inject": 103, "silent": 52}
    store_of = {m["key"]: name for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(store_of[k] for p in ninth for k in p.get("expect", []))
    assert all(expected_stores[name] >= 7 for name in FOUR_STORES), expected_stores
    assert all(1 <= len(p["history"]) <= 2 for p in ninth if p["category"] in ("follow_up", "repeat"))
    earlier = [p for p in data["prompts"] if int(p.get("batch", 1)) < 9]
    assert {p["id"] for p in earlier}.isdisjoint(p["id"] for p in ninth)
    said_before = {" ".join(p["prompt"].lower().split()) for p in earlier}
    assert not [p["id"] for p in ninth if " ".join(p["prompt"].lower().split()) in said_before]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def _near_repeats(new: list[dict], earlier: list[dict], *, same_memory: float = 0.33, any_prompt: float = 0.7):
    """(new id, earlier id) pairs where a new prompt nearly repeats an earlier one: word overlap (Jaccard) at
    `same_memory` or more with an earlier prompt that expects one of the same memories (the same question asked
    again), or at `any_prompt` or more with any earlier prompt."""
    pairs = []
    for p in new:
        words, expect = _words(p["prompt"]), set(p.get("expect", []))
        for q in earlier:
            other = _words(q["prompt"])
            overlap = len(words & other) / max(1, len(words | other))
            if overlap >= any_prompt or (overlap >= same_memory and expect & set(q.get("expect", []))):
                pairs.append((p["id"], q["id"]))
    return pairs


def _labels_hold(batch: list[dict]) -> None:
    """A batch's labels: silent exactly in the silent categories (machine prompts either), an inject prompt expects a
    memory, a silent one expects and accepts none, no memory both expected and accepted."""
    silent_categories = {"near_miss", "acknowledgement", "chit_chat", "off_topic"}
    assert all((p["kind"] == "silent") == (p["category"] in silent_categories)
               for p in batch if p["category"] != "machine")
    assert all(p.get("expect") for p in batch if p["kind"] == "inject")
    assert not [p["id"] for p in batch if p["kind"] == "silent" and (p.get("expect") or p.get("accept"))]
    assert not [p["id"] for p in batch if set(p.get("expect", [])) & set(p.get("accept", []))]


def _follow_ups_hold(batch: list[dict]) -> None:
    """A follow-up has one or two prompts of history (one has two); no other prompt has any."""
    follow_ups = [p for p in batch if p["category"] == "follow_up"]
    assert all(1 <= len(p["history"]) <= 2 for p in follow_ups)
    assert sum(1 for p in follow_ups if len(p["history"]) == 2) == 1
    assert not [p["id"] for p in batch if "history" in p and p["category"] != "follow_up"]


def _repeats_nothing(batch: list[dict], data: dict, number: int) -> None:
    """Batch `number` shares no id with the batches before it, repeats none of their prompts word for word or nearly
    (`_near_repeats`), and no two of its prompts ask the same memory in nearly the same words."""
    earlier = [p for p in data["prompts"] if int(p.get("batch", 1)) < number]
    assert {p["id"] for p in earlier}.isdisjoint(p["id"] for p in batch)
    said_before = {" ".join(p["prompt"].lower().split()) for p in earlier}
    assert not [p["id"] for p in batch if " ".join(p["prompt"].lower().split()) in said_before]
    assert _near_repeats(batch, earlier) == []
    assert not [(a, b) for a, b in _near_repeats(batch, batch) if a != b]


def _paraphrases_keep_rare_words(batch: list[dict], memories: dict) -> None:
    """A paraphrase gives away no content word of its answer that fewer than three written memories hold."""
    words = {k: _words(f"{m.get('title', '')} {m['content']}") for k, (name, m) in memories.items() if name != "docs"}
    rare = [(p["id"], w) for p in batch if p["category"] == "paraphrase" for k in p["expect"]
            for w in (_words(p["prompt"]) & words[k]) - _FUNCTION_WORDS if sum(w in v for v in words.values()) < 3]
    assert rare == []


def test_near_repeat_check_catches_a_reworded_earlier_prompt():
    earlier = [{"id": "wl01", "prompt": "when is my next dentist appointment", "expect": ["l034"]},
               {"id": "wm01", "prompt": "<command-name>/clear</command-name>"}]
    new = [{"id": "wl02", "prompt": "when's my next dentist visit?", "expect": ["l034"]},
           {"id": "wl03", "prompt": "when's my next dentist visit?", "expect": ["l016"]},
           {"id": "wm02", "prompt": "<command-name>/clear</command-name> "}]
    assert _near_repeats(new, earlier) == [("wl02", "wl01"), ("wm02", "wm01")]


def test_whisper_batch_ten_is_cut_among_itself_and_repeats_no_earlier_prompt():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    tenth = [p for p in data["prompts"] if p.get("batch") == 10]
    assert len(tenth) == 154
    split = assign_splits(data["name"], tenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in tenth} == split
    assert Counter(split.values()) == {"dev": 78, "test": 76}
    assert Counter(p["category"] for p in tenth) == {
        "project": 22, "cross_project": 8, "identity": 14, "personal": 20, "paraphrase": 22, "follow_up": 10,
        "docs": 8, "near_miss": 31, "machine": 10, "acknowledgement": 2, "chit_chat": 2, "off_topic": 3, "repeat": 2}
    assert Counter(p["kind"] for p in tenth) == {"inject": 106, "silent": 48}
    assert Counter((p["category"], p["kind"]) for p in tenth if p["category"] == "machine") == {
        ("machine", "silent"): 8, ("machine", "inject"): 2}
    store_of = {m["key"]: name for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(store_of[k] for p in tenth for k in p.get("expect", []))
    assert all(expected_stores[name] >= 8 for name in FOUR_STORES), expected_stores
    outdated = {m["key"] for name in data["stores"] for m in raw_store(name)["memories"] if m.get("valid_until")}
    assert not [p["id"] for p in tenth if outdated & set(p.get("expect", []))]
    assert all(1 <= len(p["history"]) <= 2 for p in tenth if p["category"] in ("follow_up", "repeat"))
    assert not [p["id"] for p in tenth if "history" in p and p["category"] not in ("follow_up", "repeat")]
    earlier = [p for p in data["prompts"] if int(p.get("batch", 1)) < 10]
    assert {p["id"] for p in earlier}.isdisjoint(p["id"] for p in tenth)
    said_before = {" ".join(p["prompt"].lower().split()) for p in earlier}
    assert not [p["id"] for p in tenth if " ".join(p["prompt"].lower().split()) in said_before]
    assert _near_repeats(tenth, earlier) == []


def test_whisper_batch_eleven_is_cut_among_itself_and_repeats_no_earlier_prompt():
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    eleventh = [p for p in data["prompts"] if p.get("batch") == 11]
    assert len(eleventh) == 152
    split = assign_splits(data["name"], eleventh, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in eleventh} == split
    assert Counter(split.values()) == {"dev": 78, "test": 74}
    # second reading (label11): wq174, wq179, wq180 and wq182 repeat their answer's words (project), wq166 the
    # memory's own "lost and found" (personal); the per-category cut moved wq174 and wq182 to dev, wp288 to test
    assert Counter(p["category"] for p in eleventh) == {
        "project": 26, "cross_project": 8, "identity": 14, "personal": 21, "paraphrase": 17, "follow_up": 10,
        "docs": 8, "near_miss": 30, "machine": 10, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3}
    assert Counter(p["kind"] for p in eleventh) == {"inject": 106, "silent": 46}
    assert Counter(p["kind"] for p in eleventh if p["category"] == "machine") == {"silent": 8, "inject": 2}
    _labels_hold(eleventh)
    store_of = {m["key"]: name for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(store_of[k] for p in eleventh for k in p.get("expect", []))
    assert all(expected_stores[name] >= 8 for name in FOUR_STORES), expected_stores
    assert Counter(p["space"] for p in eleventh) == {
        None: 54, "kalkzak": 35, "routewise": 27, "gpxkit": 20, "loafbook": 16}
    outdated = {m["key"] for name in data["stores"] for m in raw_store(name)["memories"] if m.get("valid_until")}
    assert not [p["id"] for p in eleventh if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(eleventh)
    _repeats_nothing(eleventh, data, 11)


def test_whisper_batch_twelve_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 12 (session 20, data12) is sealed: this test reads its labels and counts, it never runs whisper on it.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    twelfth = [p for p in data["prompts"] if p.get("batch") == 12]
    assert len(twelfth) == 152
    split = assign_splits(data["name"], twelfth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in twelfth} == split
    assert Counter(split.values()) == {"dev": 77, "test": 75}
    assert Counter(p["category"] for p in twelfth) == {
        "project": 22, "cross_project": 8, "identity": 14, "personal": 20, "paraphrase": 22, "follow_up": 10,
        "docs": 8, "near_miss": 30, "machine": 10, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3}
    assert Counter(p["kind"] for p in twelfth) == {"inject": 106, "silent": 46}
    assert Counter(p["kind"] for p in twelfth if p["category"] == "machine") == {"silent": 8, "inject": 2}
    _labels_hold(twelfth)
    store_of = {m["key"]: name for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(store_of[k] for p in twelfth for k in p.get("expect", []))
    assert all(expected_stores[name] >= 8 for name in FOUR_STORES), expected_stores
    assert Counter(p["space"] for p in twelfth) == {
        None: 57, "kalkzak": 35, "routewise": 26, "gpxkit": 17, "loafbook": 17}
    outdated = {m["key"] for name in data["stores"] for m in raw_store(name)["memories"] if m.get("valid_until")}
    assert not [p["id"] for p in twelfth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(twelfth)
    _repeats_nothing(twelfth, data, 12)


def test_whisper_batch_twelve_second_reading():
    # label12 read all 152 batch 12 labels against the memories by hand (nothing ran on them). An accept that answers
    # as well as one already accepted is added (wp304: p026, the solver, next to OSRM and RQ in the stack; wq191: c016,
    # the budget the ALV approved, next to c011; wf118: l094, the Kyoto wallet, names the autumn 2024 trip), and
    # wn336 no longer asks about the docs site's MkDocs plugins, the question wn213 was reworded away from in 4747ed7
    # because p064 (MkDocs Material) half answers it. Only labels are read here, no bench runs on the sealed batch.
    from bench.datasets.loader import raw_whisper

    twelfth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 12}
    assert set(twelfth["wp304"]["accept"]) == {"p021", "p025", "p026"}
    assert set(twelfth["wq191"]["accept"]) == {"c011", "c016"}
    assert twelfth["wf118"]["accept"] == ["l094"]
    assert "mkdocs" not in twelfth["wn336"]["prompt"].lower()
    assert twelfth["wn336"]["kind"] == "silent" and "expect" not in twelfth["wn336"]
    assert sum(1 for p in twelfth.values() if p.get("accept")) == 56


def test_batch_nineteen_is_sealed_and_every_bench_runs_batch_eighteen():
    # Batch 18, written in session 26 mostly over the then sealed choir store, was unsealed with it by session 27's
    # lead for its first run. Batch 19 (session 27, data19), written mostly over the sealed allotment store, is sealed
    # until session 28's lead opens both: no bench runs it, every earlier prompt is runnable.
    from bench.datasets.loader import SEALED_BATCHES, load_whisper

    scenarios = load_whisper()
    assert SEALED_BATCHES == frozenset({19})
    runnable = scenarios.prompts_in("dev") + scenarios.prompts_in("test")
    assert len(runnable) == 2583 and len(scenarios.prompts) == 2683
    assert sum(1 for p in runnable if p.get("batch", 1) == 18) == 100
    assert not [p["id"] for p in runnable if p.get("batch", 1) == 19]
    assert scenarios.prompts_in(None) == tuple(p for p in scenarios.prompts if p.get("batch", 1) != 19)


# Function words a first-person memory rarely holds ("she", "get", "there"): not content a paraphrase could give away.
_FUNCTION_WORDS = frozenset({"a", "an", "and", "are", "as", "at", "be", "by", "do", "does", "for", "from", "get", "he",
                             "her", "his", "how", "i", "in", "is", "it", "of", "on", "or", "she", "so", "that", "the",
                             "there", "they", "to", "we", "what", "when", "where", "which", "who", "with"})


def test_whisper_batch_thirteen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 13 (session 21, data13) is sealed: this test reads its labels and counts, it never runs whisper on it.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    thirteenth = [p for p in data["prompts"] if p.get("batch") == 13]
    assert len(thirteenth) == 152
    assert {p["id"] for p in thirteenth} == {
        *(f"wp{i}" for i in range(315, 337)), *(f"wx{i}" for i in range(111, 119)),
        *(f"wi{i}" for i in range(149, 163)), *(f"wl{i}" for i in range(227, 247)),
        *(f"wq{i}" for i in range(209, 231)), *(f"wf{i}" for i in range(121, 131)),
        *(f"wd{i}" for i in range(102, 110)), *(f"wn{i}" for i in range(339, 369)),
        *(f"wm{i}" for i in range(98, 108)), *(f"wa{i}" for i in range(62, 67)), *(f"wo{i}" for i in range(58, 61))}
    split = assign_splits(data["name"], thirteenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in thirteenth} == split
    assert Counter(split.values()) == {"dev": 77, "test": 75}
    assert Counter(p["category"] for p in thirteenth) == {
        "project": 22, "cross_project": 8, "identity": 14, "personal": 20, "paraphrase": 22, "follow_up": 10,
        "docs": 8, "near_miss": 30, "machine": 10, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3}
    assert Counter(p["kind"] for p in thirteenth) == {"inject": 106, "silent": 46}
    assert Counter(p["kind"] for p in thirteenth if p["category"] == "machine") == {"silent": 8, "inject": 2}
    _labels_hold(thirteenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in thirteenth for k in p.get("expect", []))
    assert expected_stores == {"devprojects": 42, "lifelog": 39, "club": 25, "docs": 8}  # label13: +l064, +c056
    assert Counter(p["space"] for p in thirteenth) == {
        None: 58, "kalkzak": 36, "routewise": 28, "gpxkit": 15, "loafbook": 15}
    near = [p for p in thirteenth if p["category"] == "near_miss"]
    assert sum(1 for p in near if p["space"]) == 18
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert not [p["id"] for p in thirteenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(thirteenth)
    _paraphrases_keep_rare_words(thirteenth, memories)
    _repeats_nothing(thirteenth, data, 13)


def test_whisper_batch_thirteen_second_reading():
    # label13 read all 152 batch 13 labels against the memories by hand (nothing ran on them). A memory that answers a
    # part of the prompt as fully as the expected one is expected too (wp315: c056, cancelling before 1 December, is
    # the member's own question next to c011's resting membership; wl227: l064, Sofia's wedding in Porto, is a place
    # Jonas and she went together like l060, l062 and l065). wq216 no longer says "register" (the stem of c078's own
    # "registered" and "registration", held by no other memory), and wn365 asks for the photos' file size, not "how
    # big" (p046 holds their size in pixels). Only labels are read here, no bench runs on the sealed batch.
    from bench.datasets.loader import raw_whisper

    thirteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 13}
    assert thirteenth["wp315"]["expect"] == ["c011", "c056"] and thirteenth["wp315"]["accept"] == ["c019"]
    assert thirteenth["wl227"]["expect"] == ["l060", "l062", "l064", "l065"]
    assert thirteenth["wl227"]["accept"] == ["l066", "l092"]
    assert "regist" not in thirteenth["wq216"]["prompt"].lower() and thirteenth["wq216"]["category"] == "paraphrase"
    assert "file size" in thirteenth["wn365"]["prompt"] and thirteenth["wn365"]["kind"] == "silent"
    assert "expect" not in thirteenth["wn365"]
    assert sum(1 for p in thirteenth.values() if p.get("accept")) == 45


def test_whisper_batch_fourteen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 14 (session 22, data14) is sealed: this test reads its labels and counts, it never runs whisper on it.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    fourteenth = [p for p in data["prompts"] if p.get("batch") == 14]
    assert len(fourteenth) == 152
    assert {p["id"] for p in fourteenth} == {
        *(f"wp{i}" for i in range(337, 359)), *(f"wx{i}" for i in range(119, 127)),
        *(f"wi{i}" for i in range(163, 177)), *(f"wl{i}" for i in range(247, 267)),
        *(f"wq{i}" for i in range(231, 253)), *(f"wf{i}" for i in range(131, 141)),
        *(f"wd{i}" for i in range(110, 118)), *(f"wn{i}" for i in range(369, 399)),
        *(f"wm{i}" for i in range(108, 118)), *(f"wa{i}" for i in range(67, 72)), *(f"wo{i}" for i in range(61, 64))}
    split = assign_splits(data["name"], fourteenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in fourteenth} == split
    assert Counter(split.values()) == {"dev": 77, "test": 75}
    assert Counter(p["category"] for p in fourteenth) == {
        "project": 22, "cross_project": 8, "identity": 14, "personal": 20, "paraphrase": 22, "follow_up": 10,
        "docs": 8, "near_miss": 30, "machine": 10, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3}
    # label14's second reading made wm115 inject (its /security-review args name Routewise's API auth, p033)
    assert Counter(p["kind"] for p in fourteenth) == {"inject": 107, "silent": 45}
    assert Counter(p["kind"] for p in fourteenth if p["category"] == "machine") == {"silent": 7, "inject": 3}
    _labels_hold(fourteenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in fourteenth for k in p.get("expect", []))
    assert expected_stores == {"lifelog": 42, "devprojects": 39, "club": 28, "docs": 8}
    # every store is asked in the categories that fit it (club and devprojects inside and outside their spaces)
    asked = {(p["category"], memories[k][0]) for p in fourteenth for k in p.get("expect", [])}
    assert {("project", "club"), ("project", "devprojects"), ("paraphrase", "club"), ("paraphrase", "lifelog"),
            ("paraphrase", "devprojects"), ("identity", "club"), ("identity", "lifelog"),
            ("identity", "devprojects"), ("follow_up", "club"), ("follow_up", "lifelog"),
            ("follow_up", "devprojects"), ("cross_project", "club"), ("machine", "club"),
            ("machine", "devprojects")} <= asked
    assert Counter(p["space"] for p in fourteenth) == {
        None: 60, "kalkzak": 35, "routewise": 24, "loafbook": 17, "gpxkit": 16}
    near = [p for p in fourteenth if p["category"] == "near_miss"]
    assert sum(1 for p in near if p["space"]) == 18
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert not [p["id"] for p in fourteenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(fourteenth)
    assert sum(1 for p in fourteenth if p.get("accept")) == 50
    _paraphrases_keep_rare_words(fourteenth, memories)
    _repeats_nothing(fourteenth, data, 14)


def test_whisper_batch_fourteen_second_reading():
    # label14 read all 152 batch 14 labels against the memories by hand (nothing ran on them). Two paraphrases gave
    # away their answer's rare word: wq243 "midge" (l063's "midges", no other memory) and wq247 "retried" (p028's
    # "retry", no other memory). wm115's /security-review names a task a stored fact shapes (routewise/api/auth.py:
    # p033, the API's Keycloak client credentials and 5-minute tokens), as wm87's /review did, so it is inject.
    # Accepts follow the earlier batches' practice (the Playwright CLI skill d040 next to its references, the trace
    # CLI d048 next to tracing as in wd62) or add a memory fine to show: c017 (board approval of a purchase), p036
    # (Femke's surname), c004 (the treasurer's handover date), l080 (the December book club's pick). Only labels are
    # read here, no bench runs on the sealed batch.
    from bench.datasets.loader import raw_whisper

    fourteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 14}
    assert "midge" not in fourteenth["wq243"]["prompt"] and fourteenth["wq243"]["category"] == "paraphrase"
    assert "retr" not in fourteenth["wq247"]["prompt"] and fourteenth["wq247"]["category"] == "paraphrase"
    assert fourteenth["wm115"]["kind"] == "inject" and fourteenth["wm115"]["expect"] == ["p033"]
    assert "accept" not in fourteenth["wm115"]
    assert fourteenth["wd115"]["accept"] == ["d040"]
    assert fourteenth["wd116"]["expect"] == ["d045"] and fourteenth["wd116"]["accept"] == ["d042", "d040", "d048"]
    assert fourteenth["wf131"]["accept"] == ["c003", "c032", "c017"]
    assert fourteenth["wl262"]["accept"] == ["p036"]
    assert fourteenth["wi171"]["accept"] == ["c078", "c004"]
    assert fourteenth["wl258"]["accept"] == ["l080"]


def test_whisper_batch_fifteen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 15 (session 23, data15) is sealed: this test reads its labels and counts, it never runs whisper on it.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    fifteenth = [p for p in data["prompts"] if p.get("batch") == 15]
    assert len(fifteenth) == 152
    assert {p["id"] for p in fifteenth} == {
        *(f"wp{i}" for i in range(359, 381)), *(f"wx{i}" for i in range(127, 135)),
        *(f"wi{i}" for i in range(177, 191)), *(f"wl{i}" for i in range(267, 287)),
        *(f"wq{i}" for i in range(253, 275)), *(f"wf{i}" for i in range(141, 151)),
        *(f"wd{i}" for i in range(118, 126)), *(f"wn{i}" for i in range(399, 429)),
        *(f"wm{i}" for i in range(118, 128)), *(f"wa{i}" for i in range(72, 77)), *(f"wo{i}" for i in range(64, 67))}
    split = assign_splits(data["name"], fifteenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in fifteenth} == split
    assert Counter(split.values()) == {"dev": 77, "test": 75}
    assert Counter(p["category"] for p in fifteenth) == {
        "project": 22, "cross_project": 8, "identity": 14, "personal": 20, "paraphrase": 22, "follow_up": 10,
        "docs": 8, "near_miss": 30, "machine": 10, "acknowledgement": 3, "chit_chat": 2, "off_topic": 3}
    assert Counter(p["kind"] for p in fifteenth) == {"inject": 107, "silent": 45}
    assert Counter(p["kind"] for p in fifteenth if p["category"] == "machine") == {"silent": 7, "inject": 3}
    _labels_hold(fifteenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in fifteenth for k in p.get("expect", []))
    # label15's second reading: wi183 also expects l081 (her Belgian passport is the citizenship field)
    assert expected_stores == {"devprojects": 38, "lifelog": 36, "club": 28, "docs": 8}
    assert len({k for p in fifteenth for k in p.get("expect", [])}) == 95
    # every store is asked in the categories that fit it (club and devprojects inside and outside their spaces)
    asked = {(p["category"], memories[k][0]) for p in fifteenth for k in p.get("expect", [])}
    assert {("project", "club"), ("project", "devprojects"), ("paraphrase", "club"), ("paraphrase", "lifelog"),
            ("paraphrase", "devprojects"), ("identity", "club"), ("identity", "lifelog"),
            ("identity", "devprojects"), ("follow_up", "club"), ("follow_up", "lifelog"),
            ("follow_up", "devprojects"), ("cross_project", "club"), ("cross_project", "devprojects"),
            ("machine", "club"), ("machine", "devprojects"), ("personal", "lifelog"), ("docs", "docs")} <= asked
    assert Counter(p["space"] for p in fifteenth) == {
        None: 58, "kalkzak": 34, "routewise": 23, "loafbook": 20, "gpxkit": 17}
    near = [p for p in fifteenth if p["category"] == "near_miss"]
    assert sum(1 for p in near if p["space"]) == 17
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert not [p["id"] for p in fifteenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(fifteenth)
    # label15: 48 as written; wp361, wl282 and wq273 gained an accept, wq266 (now l089, no alternative) lost its own;
    # label15b: wi187, wl269, wl275 and wq260 gained one
    assert sum(1 for p in fifteenth if p.get("accept")) == 54
    _paraphrases_keep_rare_words(fifteenth, memories)
    _repeats_nothing(fifteenth, data, 15)


def test_whisper_batch_fifteen_second_reading():
    # label15 read all 152 batch 15 labels against the memories by hand (nothing ran on them). wi183's citizenship field
    # is answered only by l081 (her Belgian passport), so it is expected next to l002. 33 prompts asked an earlier
    # prompt's question about the same memory in the same situation (same request, same kind of asker) and were given
    # a new situation; two moved to a memory whose every part had not been asked already (wq260: c003 to c014; wq266:
    # l073 to l089). Only labels and texts are read here, no bench runs on the sealed batch.
    from bench.datasets.loader import raw_whisper

    fifteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 15}
    assert fifteenth["wi183"]["expect"] == ["l002", "l081"] and fifteenth["wi183"]["accept"] == ["l086"]
    assert fifteenth["wp359"]["accept"] == ["c031", "c060"] and fifteenth["wp361"]["accept"] == ["c060", "c032"]
    assert fifteenth["wl280"]["accept"] == ["l093", "l042", "l055"] and fifteenth["wl282"]["accept"] == ["l080"]
    assert fifteenth["wq260"]["expect"] == ["c014"] and fifteenth["wq266"]["expect"] == ["l089"]
    assert "accept" not in fifteenth["wq266"] and fifteenth["wq273"]["accept"] == ["p062"]
    assert fifteenth["wp369"]["accept"][0] == "p026" and fifteenth["wp377"]["accept"] == ["p063"]
    assert fifteenth["wf142"]["history"] == ["what did the board decide at its last meeting"]
    assert fifteenth["wf142"]["accept"] == ["c022"] and fifteenth["wf143"]["accept"] == ["c022", "c052"]
    reworded = {
        "wp366": "friday dispatch report", "wp367": "--autogenerate", "wp368": "extra monday stops",
        "wp369": "every depot solves", "wp371": "direct access grants", "wp373": "blurry", "wp377": "No module named",
        "wx131": "temperature curves are degrees", "wx133": "inside the eu", "wx134": "17 december",
        "wi180": "# type: ignore", "wi184": "lille", "wi187": "pescatarian", "wl267": "food hall", "wl269": "hamburg",
        "wl270": "cousin is getting married", "wl272": "amman from 10 december", "wl273": "10:00 her time",
        "wl274": "sprained a knee ligament", "wl275": "coughing", "wl278": "lyon", "wq255": "3 december",
        "wq257": "how soon", "wq258": "money off", "wq259": "which holiday", "wq260": "grown-ups",
        "wq266": "mobile service", "wq272": "what do i type", "wq273": "interpreter release", "wq274": "nags them",
        "wf142": "antwerp on 14 december", "wf143": "een week voordat", "wf145": "still in amman"}
    assert not [i for i, text in reworded.items() if text not in fifteenth[i]["prompt"]]
    assert {fifteenth[i]["category"] for i in reworded} <= {"project", "cross_project", "identity", "personal",
                                                               "paraphrase", "follow_up"}


def test_whisper_batch_fifteen_third_reading():
    # label15b read the 38 prompts label15 changed against the memories by hand (nothing ran on them). Seven accepts
    # a user would find fine next to the answer (a lead, the reviewer, the vet, the evening before, the total), as
    # earlier batches accept them for the same memory; wl274 asked wl135's and wl233's questions again with a friend in
    # front, and now asks to apply her own recovery to the friend's. No expect changed.
    from bench.datasets.loader import raw_whisper

    fifteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 15}
    accepts = {"wp368": ["p025", "p028"], "wp369": ["p026", "p083"], "wi180": ["p066", "p068"], "wi187": ["l042"],
               "wl269": ["l087"], "wl275": ["l021"], "wq260": ["c001"]}
    assert {i: fifteenth[i].get("accept") for i in accepts} == accepts
    assert "is that realistic?" in fifteenth["wl274"]["prompt"] and "how hard" not in fifteenth["wl274"]["prompt"]
    assert fifteenth["wl274"]["expect"] == ["l032"] and fifteenth["wl274"]["accept"] == ["l031"]


def test_the_home_store_is_open_and_every_bench_seeds_it():
    # The fifth store (session 24, data16) was sealed until session 25's lead opened it with batch 16: every bench
    # that runs the stores runs it, the whisper home holds its memories and batch 16's prompts name them.
    import bench.auto_links
    import bench.scorer_pools
    import bench.stores_recall
    import bench.whisper_identity
    from bench.datasets.loader import SEALED_STORES, load_whisper, merged_memories

    assert "home" in STORES and "home" not in SEALED_STORES
    for bench in (bench.auto_links, bench.scorer_pools, bench.stores_recall, bench.whisper_identity):
        assert "home" in bench.STORES and set(bench.STORES) - {"recall"} <= set(STORES), bench.__name__
    scenarios = load_whisper()
    assert "home" in scenarios.stores
    assert load_store("home").name == "home"
    home_keys = {m["key"] for m in raw_store("home")["memories"]}
    memories, _ = merged_memories(scenarios.stores)  # what bench.whisper_stores and bench.whisper_ab seed
    assert home_keys <= {m["key"] for m in memories}
    named = {k for p in scenarios.prompts_in(None) if p.get("batch", 1) == 16
             for k in [*p.get("expect", []), *p.get("accept", [])]}
    assert named & home_keys


def test_the_home_store_has_the_shape_of_the_other_stores():
    # Structure only (counts, kinds, dates, links), read without printing any memory's or query's text.
    from datetime import datetime

    data = raw_store("home")
    memories, queries = data["memories"], data["queries"]
    assert data["name"] == "home" and data["self"]["name"] == "Noor Haddad" and data["split_seed"] == SEED
    now = datetime.fromisoformat(data["now"].replace("Z", "+00:00"))
    assert now == datetime.fromisoformat(raw_store("club")["now"].replace("Z", "+00:00"))
    assert 45 <= len(memories) <= 60 and 36 <= len(queries) <= 48
    assert all(m["key"].startswith("h") for m in memories) and all(q["id"].startswith("hq") for q in queries)
    assert all(datetime.fromisoformat(m["created"].replace("Z", "+00:00")) < now for m in memories)
    assert len({m["type"] for m in memories}) >= 7
    assert sum(1 for m in memories if m["about_self"]) >= 5
    assert sum(1 for m in memories if "\n## " in m["content"]) >= 3  # long notes with headings
    outdated = [m["key"] for m in memories if m["valid_until"]]
    evolved = {e["target"] for e in data["edges"] if e["edge"] == "evolved_from"}
    assert len(outdated) >= 2 and set(outdated) <= evolved
    assert Counter(q["category"] for q in queries)["offtopic"] >= 3
    assert {q["category"] for q in queries} >= {"identity", "people", "temporal", "recurring", "preference",
                                                 "paraphrase", "keyword", "offtopic"}


def test_whisper_batch_sixteen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 16 (session 24, data16) is sealed with the home store: this test reads its labels and counts, it never runs
    # whisper on it. Two thirds of it asks about the home store; the four stores get fresh situations only.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    # course: batch 17; choir: batch 18; allotment: batch 19
    assert data["stores"] == ["docs", "lifelog", "devprojects", "club", "home", "course", "choir", "allotment"]
    sixteenth = [p for p in data["prompts"] if p.get("batch") == 16]
    assert len(sixteenth) == 120
    assert {p["id"] for p in sixteenth} == {
        *(f"wp{i}" for i in range(381, 398)), *(f"wx{i}" for i in range(135, 141)),
        *(f"wi{i}" for i in range(191, 202)), *(f"wl{i}" for i in range(287, 303)),
        *(f"wq{i}" for i in range(275, 292)), *(f"wf{i}" for i in range(151, 159)),
        *(f"wd{i}" for i in range(126, 132)), *(f"wn{i}" for i in range(429, 453)),
        *(f"wm{i}" for i in range(128, 136)), *(f"wa{i}" for i in range(77, 81)), *(f"wo{i}" for i in range(67, 70))}
    split = assign_splits(data["name"], sixteenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in sixteenth} == split
    assert Counter(split.values()) == {"dev": 62, "test": 58}
    assert Counter(p["category"] for p in sixteenth) == {
        "project": 17, "cross_project": 6, "identity": 11, "personal": 16, "paraphrase": 17, "follow_up": 8,
        "docs": 6, "near_miss": 24, "machine": 8, "acknowledgement": 2, "chit_chat": 2, "off_topic": 3}
    assert Counter(p["kind"] for p in sixteenth) == {"inject": 83, "silent": 37}
    assert Counter(p["kind"] for p in sixteenth if p["category"] == "machine") == {"silent": 6, "inject": 2}
    _labels_hold(sixteenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in sixteenth for k in p.get("expect", []))
    assert expected_stores == {"home": 73, "lifelog": 8, "docs": 6, "club": 2, "devprojects": 2}  # label16: +h015 (wp381)
    about_home = [p for p in sixteenth if p["space"] == "verbouwing"
                  or any(memories[k][0] == "home" for k in [*p.get("expect", []), *p.get("accept", [])])]
    assert len(about_home) >= 60
    asked = {(p["category"], memories[k][0]) for p in sixteenth for k in p.get("expect", [])}
    assert {(c, "home") for c in ("project", "cross_project", "identity", "personal", "paraphrase", "follow_up",
                                  "machine")} <= asked
    assert {("docs", "docs"), ("personal", "lifelog"), ("identity", "lifelog"), ("project", "club"),
            ("project", "devprojects"), ("cross_project", "club"), ("cross_project", "devprojects")} <= asked
    assert Counter(p["space"] for p in sixteenth) == {
        "verbouwing": 66, None: 34, "gpxkit": 7, "kalkzak": 6, "routewise": 4, "loafbook": 3}
    near = [p for p in sixteenth if p["category"] == "near_miss"]
    assert sum(1 for p in near if p["space"]) == 20
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert not [p["id"] for p in sixteenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(sixteenth)
    assert sum(1 for p in sixteenth if p.get("accept")) == 56  # label16: wi196, wq275, wf153, wf156, wf157 gain one
    _paraphrases_keep_rare_words(sixteenth, memories)
    _repeats_nothing(sixteenth, data, 16)


def test_batch_sixteen_and_the_home_store_second_reading():
    # label16 (session 24) read batch 16 and the home store by hand against the five stores' memories (no whisper,
    # recall, search or bench run on them). Its changes, pinned by ids and labels: the prompts' and memories' text is
    # not printed.
    from bench.datasets.loader import raw_whisper

    sixteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 16}
    assert sixteenth["wp381"]["expect"] == ["h046", "h015"]
    assert sixteenth["wp381"]["accept"] == ["h013", "h017", "h019", "h051"]
    added = {"wp383": "h015", "wp387": "h039", "wp389": "h029", "wp391": "l084", "wp393": "l079", "wi196": "h002",
             "wi198": "h048", "wi201": "h019", "wl293": "h001", "wl295": "c001", "wl300": "h001", "wq275": "h001",
             "wq285": "h001", "wf151": "h036", "wf153": "h052", "wf154": "h043", "wf155": "h019", "wf156": "h001",
             "wf157": "h004", "wm134": "h019"}
    assert not [i for i, k in added.items() if k not in sixteenth[i].get("accept", [])]
    assert "h046" in sixteenth["wf155"]["accept"] and "h046" in sixteenth["wp387"]["accept"]
    assert "ilse" not in sixteenth["wx138"]["prompt"]  # Ilse is on the kascommissie (club), not the board
    assert "2027 is in" not in sixteenth["wl289"]["prompt"]  # a 2027 bill cannot be in on 23 November 2026
    home = raw_store("home")
    queries = {q["id"]: q for q in home["queries"]}
    assert {i: queries[i].get("accept") for i in ("hq11", "hq13", "hq26", "hq29")} == {
        "hq11": ["h001"], "hq13": ["h008", "h001"], "hq26": ["h018"], "hq29": ["h046", "h019"]}
    created = {m["key"]: m["created"] for m in home["memories"]}
    assert created["h014"] == "2026-09-29T15:00:00Z" and created["h025"] == "2026-09-30T17:00:00Z"
    content = {m["key"]: m["content"] for m in home["memories"]}
    assert "without objections" not in content["h011"] and "ran to" not in content["h013"]


def test_batch_sixteen_and_the_home_store_third_reading():
    # label16b (session 24) read label16's changes, the home store against the four older stores, every silent batch 16
    # prompt against the five stores and every paraphrase's shared words, by hand and grep (nothing ran on them). Its
    # changes, pinned by ids, labels and dates: the prompts' and memories' text is not printed.
    from bench.datasets.loader import raw_whisper

    sixteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 16}
    assert sixteenth["wi191"]["accept"] == ["h018", "h033"]  # who paints (and primes) is h033's fact
    assert sixteenth["wm134"]["accept"] == ["h036", "h019", "h046"]  # the socket by the sofa bed is on the snag list
    # the near miss asked for a number no memory holds, but "nobody's here" at 8 asked what h002 answers (on site
    # Monday to Thursday from 7:30)
    assert sixteenth["wn429"]["kind"] == "silent" and "nobody" not in sixteenth["wn429"]["prompt"]
    created = {m["key"]: m["created"] for m in raw_store("home")["memories"]}
    # each told, in the past tense, what happened after its own created: h009 the application submitted on 4 May,
    # h027 the power off until 13:00, h028 a day's installation, h043 the gutters told as cleaned at 9:00
    assert {k: created[k] for k in ("h009", "h027", "h028", "h043")} == {
        "h009": "2026-05-04T17:00:00Z", "h027": "2026-10-12T15:00:00Z", "h028": "2026-11-03T17:00:00Z",
        "h043": "2026-11-16T15:00:00Z"}


def test_the_course_store_is_open_and_every_bench_seeds_it():
    # The sixth store (session 25, data17: her Dutch Sign Language course) was sealed until session 26's lead opened it
    # with batch 17: every bench that runs the stores runs it, the whisper home holds its memories and batch 17's
    # prompts name them, some in its space.
    import bench.auto_links
    import bench.scorer_pools
    import bench.stores_recall
    import bench.whisper_identity
    from bench.datasets.loader import SEALED_STORES, load_whisper, merged_memories

    assert "course" in STORES and "course" not in SEALED_STORES
    for bench in (bench.auto_links, bench.scorer_pools, bench.stores_recall, bench.whisper_identity):
        assert "course" in bench.STORES and set(bench.STORES) - {"recall"} <= set(STORES), bench.__name__
    scenarios = load_whisper()
    assert set(scenarios.stores) == set(STORES)
    assert load_store("course").name == "course"
    course_keys = {m["key"] for m in raw_store("course")["memories"]}
    memories, _ = merged_memories(scenarios.stores)  # what bench.whisper_stores and bench.whisper_ab seed
    assert course_keys <= {m["key"] for m in memories}
    seventeenth = [p for p in scenarios.prompts_in(None) if p.get("batch", 1) == 17]
    assert {k for p in seventeenth for k in [*p.get("expect", []), *p.get("accept", [])]} & course_keys
    spaces = {m["space"] for m in raw_store("course")["memories"]} - {None}
    assert spaces and [p["id"] for p in seventeenth if p.get("space") in spaces]


def test_the_course_store_has_the_shape_of_the_other_stores():
    # Structure only (counts, kinds, dates, links), read without printing any memory's or query's text.
    from datetime import datetime

    data = raw_store("course")
    memories, queries = data["memories"], data["queries"]
    assert data["name"] == "course" and data["self"]["name"] == "Noor Haddad" and data["split_seed"] == SEED
    now = datetime.fromisoformat(data["now"].replace("Z", "+00:00"))
    assert now == datetime.fromisoformat(raw_store("home")["now"].replace("Z", "+00:00"))
    assert 40 <= len(memories) <= 60 and 36 <= len(queries) <= 48
    assert all(m["key"].startswith("g") for m in memories) and all(q["id"].startswith("gq") for q in queries)
    other_keys = {m["key"][0] for name in ALL_STORES if name != "course" for m in raw_store(name)["memories"]}
    assert "g" not in other_keys
    assert all(datetime.fromisoformat(m["created"].replace("Z", "+00:00")) < now for m in memories)
    assert len({m["type"] for m in memories}) >= 7
    assert sum(1 for m in memories if m["about_self"]) >= 5
    assert sum(1 for m in memories if "\n## " in m["content"]) >= 3  # long notes with headings
    outdated = [m["key"] for m in memories if m["valid_until"]]
    evolved = {e["target"] for e in data["edges"] if e["edge"] == "evolved_from"}
    assert len(outdated) >= 2 and set(outdated) <= evolved
    assert all(datetime.fromisoformat(m["valid_until"].replace("Z", "+00:00")) < now for m in memories
               if m["valid_until"])
    assert Counter(q["category"] for q in queries)["offtopic"] >= 3
    assert {q["category"] for q in queries} >= {"identity", "people", "temporal", "recurring", "preference",
                                                 "paraphrase", "keyword", "offtopic"}


def test_the_choir_store_is_open_and_every_bench_seeds_it():
    # The seventh store (session 26, data18: her amateur choir) was sealed until session 27's lead opened it with
    # batch 18: every bench that runs the stores runs it, the whisper home holds its memories and batch 18's prompts
    # name them, some in its space; bench.prompt_groups places its prompts.
    import bench.auto_links
    import bench.scorer_pools
    import bench.stores_recall
    import bench.whisper_identity
    from bench.datasets.loader import SEALED_STORES, load_whisper, merged_memories
    from bench.prompt_groups import SPACE_STORE, STORE_OF_KEY

    assert "choir" in STORES and "choir" not in SEALED_STORES  # the eighth store, allotment, is sealed (below)
    for bench in (bench.auto_links, bench.scorer_pools, bench.stores_recall, bench.whisper_identity):
        assert "choir" in bench.STORES and set(bench.STORES) - {"recall"} <= set(STORES), bench.__name__
    scenarios = load_whisper()
    assert set(scenarios.stores) == set(STORES)
    assert load_store("choir").name == "choir"
    choir_keys = {m["key"] for m in raw_store("choir")["memories"]}
    memories, _ = merged_memories(scenarios.stores)  # what bench.whisper_stores and bench.whisper_ab seed
    assert choir_keys <= {m["key"] for m in memories}
    eighteenth = [p for p in scenarios.prompts_in(None) if p.get("batch", 1) == 18]
    assert {k for p in eighteenth for k in [*p.get("expect", []), *p.get("accept", [])]} & choir_keys
    spaces = {m["space"] for m in raw_store("choir")["memories"]} - {None}
    assert spaces == {"koor"} and [p["id"] for p in eighteenth if p.get("space") in spaces]
    assert STORE_OF_KEY["k"] == "choir" and SPACE_STORE["koor"] == "choir"


def test_the_choir_store_has_the_shape_of_the_other_stores():
    # Structure only (counts, kinds, dates, links), read without printing any memory's or query's text.
    from datetime import datetime

    data = raw_store("choir")
    memories, queries = data["memories"], data["queries"]
    assert data["name"] == "choir" and data["self"]["name"] == "Noor Haddad" and data["split_seed"] == SEED
    now = datetime.fromisoformat(data["now"].replace("Z", "+00:00"))
    assert now == datetime.fromisoformat(raw_store("course")["now"].replace("Z", "+00:00"))
    assert (len(memories), len(queries), len(data["edges"])) == (45, 42, 13)
    assert all(m["key"].startswith("k") for m in memories) and all(q["id"].startswith("kq") for q in queries)
    other_keys = {m["key"][0] for name in ALL_STORES if name != "choir" for m in raw_store(name)["memories"]}
    assert "k" not in other_keys
    assert all(datetime.fromisoformat(m["created"].replace("Z", "+00:00")) < now for m in memories)
    assert len({m["type"] for m in memories}) >= 7
    assert sum(1 for m in memories if m["about_self"]) >= 5
    assert sum(1 for m in memories if "\n## " in m["content"]) >= 3  # long notes with headings
    outdated = [m["key"] for m in memories if m["valid_until"]]
    evolved = {e["target"] for e in data["edges"] if e["edge"] == "evolved_from"}
    assert len(outdated) == 2 and set(outdated) <= evolved
    assert all(datetime.fromisoformat(m["valid_until"].replace("Z", "+00:00")) < now for m in memories
               if m["valid_until"])
    assert Counter(q["category"] for q in queries) == {
        "identity": 3, "people": 6, "temporal": 6, "recurring": 3, "preference": 4, "paraphrase": 8, "keyword": 8,
        "offtopic": 4}
    assert Counter(q["split"] for q in queries) == {"dev": 22, "test": 20}


def test_a_sealed_store_is_refused_by_every_loader(monkeypatch):
    # The seal that kept home out of every bench through session 24 (loader.SEALED_STORES), kept working for the
    # next store written blind.
    from bench.datasets import loader

    monkeypatch.setattr(loader, "SEALED_STORES", frozenset({"home"}))
    with pytest.raises(loader.SealedStore, match="sealed"):
        loader.load_store("home")
    with pytest.raises(loader.SealedStore):
        loader.merged_memories(("club", "home"))
    assert loader.load_store("club").name == "club"


def test_whisper_batch_seventeen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 17 (session 25, data17) is sealed with the course store: this test reads its labels and counts, it never
    # runs whisper on it. About two thirds of it asks about the course store; the five stores get fresh situations only.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    seventeenth = [p for p in data["prompts"] if p.get("batch") == 17]
    assert len(seventeenth) == 100
    assert {p["id"] for p in seventeenth} == {
        *(f"wp{i}" for i in range(398, 412)), *(f"wx{i}" for i in range(141, 146)),
        *(f"wi{i}" for i in range(202, 211)), *(f"wl{i}" for i in range(303, 316)),
        *(f"wq{i}" for i in range(292, 306)), *(f"wf{i}" for i in range(159, 166)),
        *(f"wd{i}" for i in range(132, 137)), *(f"wn{i}" for i in range(453, 473)),
        *(f"wm{i}" for i in range(136, 143)), *(f"wa{i}" for i in range(81, 85)), *(f"wo{i}" for i in range(70, 72))}
    split = assign_splits(data["name"], seventeenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in seventeenth} == split
    assert Counter(split.values()) == {"dev": 53, "test": 47}
    assert Counter(p["category"] for p in seventeenth) == {
        "project": 14, "cross_project": 5, "identity": 9, "personal": 13, "paraphrase": 14, "follow_up": 7,
        "docs": 5, "near_miss": 20, "machine": 7, "acknowledgement": 2, "chit_chat": 2, "off_topic": 2}
    assert Counter(p["kind"] for p in seventeenth) == {"inject": 69, "silent": 31}
    assert Counter(p["kind"] for p in seventeenth if p["category"] == "machine") == {"silent": 5, "inject": 2}
    _labels_hold(seventeenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in seventeenth for k in p.get("expect", []))
    # course 58 -> 61 in label17b's third reading: wi208, wi209 and wl315 expect the memory holding half of what they
    # ask (g022, g009, g036), accepted before
    assert expected_stores == {"course": 61, "lifelog": 7, "devprojects": 3, "docs": 5, "club": 2, "home": 2}
    about_course = [p for p in seventeenth if p["space"] == "gebarentaal"
                    or any(memories[k][0] == "course" for k in [*p.get("expect", []), *p.get("accept", [])])]
    assert len(about_course) >= 60
    asked = {(p["category"], memories[k][0]) for p in seventeenth for k in p.get("expect", [])}
    assert {(c, "course") for c in ("project", "cross_project", "identity", "personal", "paraphrase", "follow_up",
                                    "machine")} <= asked
    assert {("docs", "docs"), ("personal", "lifelog"), ("identity", "lifelog"), ("identity", "devprojects"),
            ("project", "club"), ("project", "devprojects"), ("paraphrase", "home")} <= asked
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert not [p["id"] for p in seventeenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(seventeenth)
    _paraphrases_keep_rare_words(seventeenth, memories)
    _repeats_nothing(seventeenth, data, 17)


def test_batch_seventeen_and_course_second_reading():
    # label17's second reading of batch 17 and the course store (both sealed; labels and the changed prompts only,
    # no whisper, recall or search run): accepts a reader finds as good as or a fair extra to the answer, five
    # prompts that repeated an earlier prompt's situation replaced by new ones on the same store, wm136/wm138 numbered
    # as the store numbers assignments (g032: assignment 6 is lesson 6's), gq30 without g032's own words.
    from bench.datasets.loader import raw_whisper

    seventeenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 17}
    accepts = {"wp402": "g005", "wp404": "g022", "wp409": "l013", "wx144": "l071", "wi202": "g002",
               "wi204": "g035", "wl303": "g018", "wl304": "p070", "wl306": "g037", "wq292": "g005",
               "wq296": "g035", "wq297": "g042", "wf161": "g037", "wd135": "d020"}
    assert not [i for i, k in accepts.items() if k not in seventeenth[i].get("accept", [])]
    replaced = {"wp410": ["p030"], "wp411": ["c040"], "wi208": ["l046"], "wi209": ["p006"], "wl313": ["l055"],
                "wl315": ["c075"]}
    assert seventeenth["wl313"]["accept"] == ["g036", "l065"]
    # the third reading (below) added a second expected memory to wi208, wi209 and wl315; the replacement's stays first
    assert {i: seventeenth[i]["expect"][:1] for i in replaced} == replaced
    assert sum(1 for p in seventeenth.values() if p.get("accept")) == 46  # 45 here; the third reading's net +1
    assert "Opdracht 11" in seventeenth["wm136"]["prompt"] and "11_Haddad" in seventeenth["wm138"]["prompt"]
    assert seventeenth["wp403"]["prompt"].startswith("planning the write-up about saturday")
    queries = {q["id"]: q for q in raw_store("course")["queries"]}
    assert {i: queries[i].get("accept", []) for i in ("gq17", "gq19", "gq22", "gq26")} == {
        "gq17": ["g007", "g018"], "gq19": ["g035"], "gq22": ["g041"], "gq26": ["g014", "g005"]}
    assert {"g035", "g008"} <= set(queries["gq21"]["accept"]) and {"g045", "g023"} <= set(queries["gq41"]["accept"])
    assert "ages" not in queries["gq30"]["query"].split() and "family" not in queries["gq30"]["query"].split()


def test_batch_seventeen_and_course_third_reading():
    # label17b's third reading of batch 17 and the course store (both sealed; labels and one replaced prompt, no
    # whisper, recall or search run): a memory holding half of what a prompt asks is expected, not only accepted;
    # three fair extras; wf165 was a standalone question (and wf90's two questions in reverse order) labelled a
    # follow-up, now one that needs its history.
    from bench.datasets.loader import raw_whisper

    seventeenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 17}
    assert {i: seventeenth[i]["expect"] for i in ("wi208", "wi209", "wl315")} == {
        "wi208": ["l046", "g022"],  # 'the evening of my exam': the date is g022's
        "wi209": ["p006", "g009"],  # 'the school's file name format' is g009's
        "wl315": ["c075", "g036"]}  # NGT 2's Thursdays (February to June) are g036's, the prompt does not give them
    assert {i: seventeenth[i].get("accept", []) for i in ("wi208", "wi209", "wl315", "wx142", "wp406")} == {
        "wi208": ["l040"], "wi209": [], "wl315": [], "wx142": ["p046"], "wp406": ["g035"]}
    wf165 = seventeenth["wf165"]
    assert (wf165["expect"], wf165["accept"], len(wf165["history"])) == (["l052"], ["g041"], 1)
    assert "dentist" not in wf165["prompt"] and "youssef" in wf165["history"][0]
    queries = {q["id"]: q for q in raw_store("course")["queries"]}
    assert queries["gq23"]["accept"] == ["g020", "g002"]  # g002: 'that lunch is what made me want to learn'


def test_the_checker_refuses_a_tag_remember_refuses():
    # The course store went through three readings and the checker with a memory tagged 'self' (g016), the tag
    # remember reserves for the self node: it was found only when session 26 first seeded the store. The checker now
    # says so for any store, sealed ones included.
    from bench.datasets.check import check_data

    data = copy.deepcopy(raw_store("course"))
    assert check_data("course", data)[0] == []
    data["memories"][0]["tags"] = [*data["memories"][0]["tags"], "Self"]
    errors, _ = check_data("course", data)
    assert any("reserved for the self node" in e and data["memories"][0]["key"] in e for e in errors)


def test_whisper_batch_eighteen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 18 (session 26, data18) is sealed with the choir store: this test reads its labels and counts, it never
    # runs whisper on it. About two thirds of it asks about the choir store; the six stores get fresh situations only.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    eighteenth = [p for p in data["prompts"] if p.get("batch") == 18]
    assert len(eighteenth) == 100
    assert {p["id"] for p in eighteenth} == {
        *(f"wp{i}" for i in range(412, 426)), *(f"wx{i}" for i in range(146, 151)),
        *(f"wi{i}" for i in range(211, 220)), *(f"wl{i}" for i in range(316, 329)),
        *(f"wq{i}" for i in range(306, 320)), *(f"wf{i}" for i in range(166, 173)),
        *(f"wd{i}" for i in range(137, 142)), *(f"wn{i}" for i in range(473, 493)),
        *(f"wm{i}" for i in range(143, 150)), *(f"wa{i}" for i in range(85, 89)), *(f"wo{i}" for i in range(72, 74))}
    split = assign_splits(data["name"], eighteenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in eighteenth} == split
    assert Counter(split.values()) == {"dev": 53, "test": 47}
    assert Counter(p["category"] for p in eighteenth) == {
        "project": 14, "cross_project": 5, "identity": 9, "personal": 13, "paraphrase": 14, "follow_up": 7,
        "docs": 5, "near_miss": 20, "machine": 7, "acknowledgement": 2, "chit_chat": 2, "off_topic": 2}
    assert Counter(p["kind"] for p in eighteenth) == {"inject": 69, "silent": 31}
    assert Counter(p["kind"] for p in eighteenth if p["category"] == "machine") == {"silent": 5, "inject": 2}
    _labels_hold(eighteenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in eighteenth for k in p.get("expect", []))
    assert expected_stores == {"choir": 52, "course": 9, "docs": 5, "home": 4, "club": 1, "lifelog": 1}
    assert sum(1 for p in eighteenth if p.get("accept")) == 53  # label18b: +wl316 (g028)
    about_choir = [p for p in eighteenth if p["space"] == "koor"
                   or any(memories[k][0] == "choir" for k in [*p.get("expect", []), *p.get("accept", [])])]
    assert len(about_choir) >= 60
    asked = {(p["category"], memories[k][0]) for p in eighteenth for k in p.get("expect", [])}
    assert {(c, "choir") for c in ("project", "cross_project", "identity", "personal", "paraphrase", "follow_up",
                                   "machine")} <= asked
    assert {("docs", "docs"), ("personal", "lifelog"), ("personal", "course"), ("identity", "course"),
            ("identity", "home"), ("project", "home"), ("project", "course"), ("paraphrase", "course"),
            ("cross_project", "club"), ("personal", "home")} <= asked
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert {"k012", "k015"} <= outdated
    assert not [p["id"] for p in eighteenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    _follow_ups_hold(eighteenth)
    _paraphrases_keep_rare_words(eighteenth, memories)
    _repeats_nothing(eighteenth, data, 18)


def test_batch_eighteen_and_choir_second_reading():
    # label18's second reading of batch 18 and the choir store (both sealed; labels and the changed prompts only, no
    # whisper, recall or search run): accepts a reader finds as good as or a fair extra to the answer; wm144's debit
    # dated inside `now`'s month; wq309 without k010's own stem; four prompts that asked an earlier prompt's question
    # in the same situation replaced by new ones on the same store (same id, category, kind and split).
    from bench.datasets.loader import raw_whisper

    eighteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 18}
    accepts = {"wp412": "k032", "wp414": "k035", "wx146": "l051", "wl320": "k020", "wl324": "k022"}
    assert not [i for i, k in accepts.items() if k not in eighteenth[i]["accept"]]
    assert {"k031", "k006"} <= set(eighteenth["wi216"]["accept"])
    assert "contributie november" in eighteenth["wm144"]["prompt"] and "december" not in eighteenth["wm144"]["prompt"]
    assert "borrow" not in eighteenth["wq309"]["prompt"]
    replaced = {"wq317": (["g039"], ["g001"], "finger"), "wq318": (["h043"], [], "builders"),
                "wi218": (["h037"], ["h034"], "varnish"), "wl327": (["l015"], ["l064"], "loaf")}
    assert {i: (eighteenth[i]["expect"], eighteenth[i].get("accept", [])) for i in replaced} == {
        i: (e, a) for i, (e, a, _) in replaced.items()}
    assert not [i for i, (_, _, old) in replaced.items() if old in eighteenth[i]["prompt"]]
    # every new accept went to a prompt that already had one, and the replacements keep whether one does
    assert sum(1 for p in eighteenth.values() if p.get("accept")) == 53  # 52 here; the third reading's net +1
    queries = {q["id"]: q for q in raw_store("choir")["queries"]}
    assert {i: queries[i].get("accept", []) for i in ("kq05", "kq18", "kq20", "kq30")} == {
        "kq05": ["k034", "k001"], "kq18": ["k039", "k031"], "kq20": ["k035", "k031", "k006"], "kq30": ["k007", "k022"]}


def test_batch_eighteen_and_choir_third_reading():
    # label18b's third reading of batch 18 and the choir store (both sealed; labels, one prompt's text and two memory
    # texts, no whisper, recall or search run): the guest pianist who could play 'only on Sundays in December' would
    # have missed the Saturday dress rehearsal k016 itself sets, so what he cannot do is Saturday evenings (the first
    # plan's concert at 20:00); wp412's Koorbericht is Joost's mail (k009, k038), not Wessel's; fair extras, one of them
    # (wl316) on a prompt that had none.
    from bench.datasets.loader import raw_whisper

    choir = {m["key"]: m["content"] for m in raw_store("choir")["memories"]}
    for key in ("k016", "k034"):
        assert "Sundays" not in choir[key] and "cannot play on Saturday evenings in December" in choir[key]
    assert "Saturday 12 December is now the dress rehearsal" in choir["k016"] and "14:00 to 17:00" in choir["k016"]
    queries = {q["id"]: q for q in raw_store("choir")["queries"]}
    assert {i: queries[i]["accept"] for i in ("kq03", "kq16")} == {"kq03": ["k001", "k004"], "kq16": ["k002", "k003"]}
    eighteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 18}
    wp412 = eighteenth["wp412"]
    assert "wessel's koorbericht" not in wp412["prompt"] and wp412["prompt"].startswith("the koorbericht says wessel")
    assert (wp412["expect"], wp412["split"], wp412["category"]) == (["k028"], "test", "project")
    assert {i: eighteenth[i]["accept"] for i in ("wp416", "wx147", "wx150", "wi213", "wl316")} == {
        "wp416": ["k016", "k027"],  # 'how do they get in': doors open at 14:30
        "wx147": ["k019", "c020", "k002", "k001"],  # Wednesday evening is choir night
        "wx150": ["c025", "k025", "l014"],  # Bram has a ticket for the concert, and he is a nurse
        "wi213": ["k001", "k021", "k035", "l051"],  # rehearsals start again on Wednesday 13 January; book club
        "wl316": ["g028"]}  # Saturday 28 November is the Deaf theatre evening
    assert sum(1 for p in eighteenth.values() if p.get("accept")) == 53


def test_the_allotment_store_is_sealed_and_no_bench_seeds_it():
    # The eighth store (session 27, data19: her allotment garden) is sealed until session 28's lead opens it with batch
    # 19: the checker reads it (raw_store), no bench loads it, no whisper home holds it, and no runnable prompt names
    # one of its memories or asks in its space. Only keys, spaces and labels are read here, never a memory's text.
    import bench.auto_links
    import bench.scorer_pools
    import bench.stores_recall
    import bench.whisper_identity
    from bench.datasets.check import check_store
    from bench.datasets.loader import SEALED_STORES, SealedStore, load_whisper, merged_memories
    from bench.prompt_groups import SPACE_STORE, STORE_OF_KEY

    assert SEALED_STORES == frozenset({"allotment"}) and "allotment" in ALL_STORES and "allotment" not in STORES
    assert set(STORES) == {"docs", "lifelog", "devprojects", "club", "home", "course", "choir"}
    for bench in (bench.auto_links, bench.scorer_pools, bench.stores_recall, bench.whisper_identity):
        assert "allotment" not in bench.STORES and set(bench.STORES) - {"recall"} <= set(STORES), bench.__name__
    scenarios = load_whisper()
    assert "allotment" not in scenarios.stores and set(scenarios.stores) == set(STORES)
    with pytest.raises(SealedStore, match="sealed"):
        load_store("allotment")
    with pytest.raises(SealedStore):
        merged_memories((*STORES, "allotment"))
    assert check_store("allotment")[0] == []  # the checker still reads it
    keys = {m["key"] for m in raw_store("allotment")["memories"]}
    memories, _ = merged_memories(scenarios.stores)  # what bench.whisper_stores and bench.whisper_ab seed
    assert keys and not keys & {m["key"] for m in memories}
    named = {k for p in scenarios.prompts_in(None) for k in [*p.get("expect", []), *p.get("accept", [])]}
    assert not named & keys
    spaces = {m["space"] for m in raw_store("allotment")["memories"]} - {None}
    assert spaces == {"moestuin"} and not [p["id"] for p in scenarios.prompts_in(None) if p.get("space") in spaces]
    # bench.prompt_groups.group_of can place its prompts once it is opened (a t key, a silent prompt in its space)
    assert STORE_OF_KEY["t"] == "allotment" and SPACE_STORE["moestuin"] == "allotment"


def test_the_allotment_store_has_the_shape_of_the_other_stores():
    # Structure only (counts, kinds, dates, links), read without printing any memory's or query's text.
    from datetime import datetime

    data = raw_store("allotment")
    memories, queries = data["memories"], data["queries"]
    assert data["name"] == "allotment" and data["self"]["name"] == "Noor Haddad" and data["split_seed"] == SEED
    now = datetime.fromisoformat(data["now"].replace("Z", "+00:00"))
    assert now == datetime.fromisoformat(raw_store("choir")["now"].replace("Z", "+00:00"))
    assert (len(memories), len(queries), len(data["edges"])) == (45, 42, 13)
    assert all(m["key"].startswith("t") for m in memories) and all(q["id"].startswith("tq") for q in queries)
    other_keys = {m["key"][0] for name in ALL_STORES if name != "allotment" for m in raw_store(name)["memories"]}
    assert "t" not in other_keys
    assert all(datetime.fromisoformat(m["created"].replace("Z", "+00:00")) < now for m in memories)
    assert len({m["type"] for m in memories}) >= 7
    assert sum(1 for m in memories if m["about_self"]) >= 5
    assert sum(1 for m in memories if m["space"] is None) >= 8
    assert sum(1 for m in memories if "\n## " in m["content"]) >= 2  # long notes with headings
    outdated = [m["key"] for m in memories if m["valid_until"]]
    evolved = {e["target"] for e in data["edges"] if e["edge"] == "evolved_from"}
    assert outdated == ["t012", "t014"] and set(outdated) <= evolved
    assert all(datetime.fromisoformat(m["valid_until"].replace("Z", "+00:00")) < now for m in memories
               if m["valid_until"])
    assert not [q["id"] for q in queries if set(q["relevant"] + q.get("accept", [])) & set(outdated)]
    assert Counter(q["category"] for q in queries) == {
        "identity": 3, "people": 6, "temporal": 6, "recurring": 3, "preference": 4, "paraphrase": 8, "keyword": 8,
        "offtopic": 4}
    assert Counter(q["split"] for q in queries) == {"dev": 22, "test": 20}


def test_whisper_batch_nineteen_is_cut_among_itself_and_repeats_no_earlier_prompt():
    # Batch 19 (session 27, data19) is sealed with the allotment store: this test reads its labels and counts, it
    # never runs whisper on it. About three fifths of it asks about the allotment store; of the seven older stores it
    # asks mostly the choir and the course, and only about memories no earlier prompt expects or in a new situation.
    from bench.datasets.loader import raw_whisper

    data = raw_whisper()
    assert data["stores"][-1] == "allotment"
    nineteenth = [p for p in data["prompts"] if p.get("batch") == 19]
    assert len(nineteenth) == 100
    assert {p["id"] for p in nineteenth} == {
        *(f"wp{i}" for i in range(426, 440)), *(f"wx{i}" for i in range(151, 156)),
        *(f"wi{i}" for i in range(220, 229)), *(f"wl{i}" for i in range(329, 342)),
        *(f"wq{i}" for i in range(320, 334)), *(f"wf{i}" for i in range(173, 180)),
        *(f"wd{i}" for i in range(142, 147)), *(f"wn{i}" for i in range(493, 513)),
        *(f"wm{i}" for i in range(150, 157)), *(f"wa{i}" for i in range(89, 93)), *(f"wo{i}" for i in range(74, 76))}
    split = assign_splits(data["name"], nineteenth, seed=data["split_seed"])
    assert {p["id"]: p["split"] for p in nineteenth} == split
    assert Counter(split.values()) == {"dev": 53, "test": 47}
    assert Counter(p["category"] for p in nineteenth) == {
        "project": 14, "cross_project": 5, "identity": 9, "personal": 13, "paraphrase": 14, "follow_up": 7,
        "docs": 5, "near_miss": 20, "machine": 7, "acknowledgement": 2, "chit_chat": 2, "off_topic": 2}
    assert Counter(p["kind"] for p in nineteenth) == {"inject": 69, "silent": 31}
    assert Counter(p["kind"] for p in nineteenth if p["category"] == "machine") == {"silent": 5, "inject": 2}
    _labels_hold(nineteenth)
    memories = {m["key"]: (name, m) for name in data["stores"] for m in raw_store(name)["memories"]}
    expected_stores = Counter(memories[k][0] for p in nineteenth for k in p.get("expect", []))
    assert expected_stores == {"allotment": 46, "choir": 10, "course": 7, "docs": 5, "home": 1}
    assert sum(1 for p in nineteenth if p.get("accept")) == 58  # label19: +wi224, wl329, wl333; label19b: +wd146
    about_allotment = [p for p in nineteenth if p["space"] == "moestuin"
                       or any(memories[k][0] == "allotment" for k in [*p.get("expect", []), *p.get("accept", [])])]
    assert len(about_allotment) >= 60
    near = [p for p in nineteenth if p["category"] == "near_miss"]
    assert sum(1 for p in near if p["space"] == "moestuin") == 9
    asked = {(p["category"], memories[k][0]) for p in nineteenth for k in p.get("expect", [])}
    assert {(c, "allotment") for c in ("project", "cross_project", "identity", "personal", "paraphrase",
                                       "follow_up", "machine")} <= asked
    assert {("docs", "docs"), ("project", "course"), ("project", "choir"), ("project", "home"),
            ("cross_project", "choir"), ("identity", "course"), ("identity", "choir"), ("personal", "course"),
            ("personal", "choir"), ("paraphrase", "course"), ("paraphrase", "choir"), ("follow_up", "course"),
            ("follow_up", "choir")} <= asked
    outdated = {k for k, (_, m) in memories.items() if m.get("valid_until")}
    assert {"t012", "t014"} <= outdated
    assert not [p["id"] for p in nineteenth if outdated & set(p.get("expect", []) + p.get("accept", []))]
    # the older stores' memories batch 19 expects: none was expected by an earlier prompt more than twice
    earlier = Counter(k for p in data["prompts"] if int(p.get("batch", 1)) < 19 for k in p.get("expect", []))
    older = {k for p in nineteenth for k in p.get("expect", []) if memories[k][0] not in ("allotment", "docs")}
    assert older and max(earlier[k] for k in older) <= 2
    _follow_ups_hold(nineteenth)
    _paraphrases_keep_rare_words(nineteenth, memories)
    _repeats_nothing(nineteenth, data, 19)


def test_batch_nineteen_and_allotment_second_reading():
    # label19's second reading of batch 19 and the allotment store (both sealed; labels, two prompts, two queries and
    # three memory texts, no whisper, recall or search run): a memory tells nothing after its own `created` (t026,
    # written 24 May, planted the beans out in June; t022, written 22 March, knew the plot's July), the September
    # inspection falls in the second half of the month as t019 says it does, two paraphrase queries without their
    # answer's rare words, greenfly asked about ahead of May rather than on 23 November, wm151's mail a reminder (t040
    # mails De Schoffel on the first Monday of the month, so December's cannot come on 23 November), and fair extras.
    from bench.datasets.loader import raw_whisper

    allotment = raw_store("allotment")
    text = {m["key"]: m["content"] for m in allotment["memories"]}
    assert "to plant them out at the start of June" in text["t026"] and "planted them out" not in text["t026"]
    assert "July" not in text["t022"] and "hard and cracked once it dries out" in text["t022"]
    assert "second half of June and of September" in text["t019"] and "16 September 2026" in text["t021"]
    queries = {q["id"]: q for q in allotment["queries"]}
    assert not {"fruit", "plants"} & set(queries["tq23"]["query"].split()) and "crop" not in queries["tq28"]["query"]
    assert {i: (queries[i]["relevant"], queries[i]["split"]) for i in ("tq23", "tq28")} == {
        "tq23": (["t031"], "dev"), "tq28": (["t024"], "dev")}
    accepted = ("tq01", "tq05", "tq10", "tq16", "tq20", "tq27", "tq32", "tq34", "tq36")
    assert {i: queries[i]["accept"] for i in accepted} == {
        "tq01": ["t005", "t013", "t001"],  # the overview says where the park is
        "tq05": ["t028"], "tq10": ["t002", "t013"],  # Tineke offered her the other half too
        "tq16": ["t018", "t001"], "tq20": ["t026", "t001"], "tq27": ["t001"],  # the park's rules in short
        "tq32": ["t038", "t001"], "tq34": ["t001"], "tq36": ["t007", "t036", "t024"]}  # they name the keyword
    nineteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 19}
    wi224, wm151 = nineteenth["wi224"], nineteenth["wm151"]
    assert "by may" in wi224["prompt"] and (wi224["expect"], wi224["split"]) == (["t025"], "dev")
    assert "De Schoffel december" not in wm151["prompt"] and "Herinnering" in wm151["prompt"]
    assert (wm151["expect"], wm151["split"], wm151["category"]) == (["t038"], "dev", "machine")
    assert {i: nineteenth[i]["accept"] for i in ("wp426", "wp429", "wp436", "wx153", "wi224", "wl329", "wl333",
                                                 "wq322")} == {
        "wp426": ["t013", "t036", "t038"],  # garlic and broad beans already in 31a; the seed potatoes for two beds
        "wp429": ["t006", "t001"], "wp436": ["t009", "t001"], "wx153": ["t001", "t011"],  # the tool shed's key
        "wi224": ["t001"], "wl329": ["t028"], "wl333": ["t001"], "wq322": ["t018", "t001"]}
    assert sum(1 for p in nineteenth.values() if p.get("accept")) == 58  # 57 here; the third reading's net +1


def test_batch_nineteen_and_allotment_third_reading():
    # label19b's third reading of batch 19 and the allotment store (both sealed; labels, one query, one prompt and one
    # memory text, no whisper, recall or search run): t031's blighted plants went where t034 sends anything diseased
    # (the park's green-waste bay, not the green bin at home); tq21 asked how much lettuce to sow 'this weekend', the
    # last weekend of November with the beds under leaves (t037); wi224's pest on broad bean tips is blackfly; fair
    # extras, one of them (wd146) on a prompt that had none.
    from bench.datasets.loader import raw_whisper

    allotment = raw_store("allotment")
    text = {m["key"]: m["content"] for m in allotment["memories"]}
    assert "green bin at home" not in text["t031"] and "the park's green-waste bay" in text["t031"]
    assert "anything diseased goes to the park's green-waste bay" in text["t034"]
    tq21 = {q["id"]: q for q in allotment["queries"]}["tq21"]
    assert "this weekend" not in tq21["query"] and "next spring" in tq21["query"]
    assert (tq21["relevant"], tq21["accept"], tq21["split"], tq21["category"]) == (
        ["t027"], ["t024"], "dev", "preference")
    nineteenth = {p["id"]: p for p in raw_whisper()["prompts"] if p.get("batch") == 19}
    wi224 = nineteenth["wi224"]
    assert "blackfly" in wi224["prompt"] and "greenfly" not in wi224["prompt"] and wi224["expect"] == ["t025"]
    assert {i: nineteenth[i]["accept"] for i in ("wp430", "wx154", "wd146")} == {
        "wp430": ["t045", "t042"],  # she kneels on a foam pad at the plot: one for the packing list
        "wx154": ["t001", "t013", "g045", "t003"],  # why she wanted a plot, for the hobby story
        "wd146": ["d025"]}  # Requests honours .netrc, as the prompt takes for granted
    assert sum(1 for p in nineteenth.values() if p.get("accept")) == 58
