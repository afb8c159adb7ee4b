"""bench/auto_links.py's pair split and scoring: pure functions over a results dict, literal expectations."""

from __future__ import annotations

from bench import auto_links

RESULTS = {
    "s": {
        "memories": 4,
        "labelled": {"a|b": "related_to", "c|d": "related_to"},
        "scores": {"cosine": {"a|b": 0.7, "c|d": 0.5, "a|c": 0.8}, "probability": {}},
    }
}


def test_a_labelled_pair_keeps_its_half_and_each_edge_type_is_halved():
    halves = auto_links.split_pairs("s", {"a|b": "related_to", "c|d": "related_to"})
    assert sorted(halves.values()) == ["dev", "test"]
    assert auto_links.split_pairs("s", {"a|b": "related_to", "c|d": "related_to", "e|f": "supports"}) == {
        **halves, "e|f": "dev"}


def test_precision_and_recall_count_pairs_of_one_half_at_a_threshold():
    halves = auto_links.split_pairs("s", RESULTS["s"]["labelled"])
    dev_pair = next(p for p, h in halves.items() if h == "dev")
    other = auto_links.unlabelled_split("s", "a|c")
    tp, pred, pos, precision, recall, _ = auto_links.prf(RESULTS, "cosine", "dev", 0.45)
    assert (tp, pos) == (1, 1) and pred == 1 + (other == "dev")
    assert recall == 1.0 and precision == (0.5 if other == "dev" else 1.0)
    score = RESULTS["s"]["scores"]["cosine"][dev_pair]
    assert auto_links.prf(RESULTS, "cosine", "dev", score + 0.01)[0] == 0
