"""Which group a labelled whisper prompt belongs to, for estimates left out by group (no Django): its labelling round
("batch"), its category, or the store it is about ("store"). Split from bench/whisper_gate_fit.py (session 23), which
re-exports `group_of`; bench/scorer_pools.py, bench/whisper_metric.py and bench/whisper_identity.py group by it too.
"""

from __future__ import annotations

STORE_OF_KEY = {"d": "docs", "l": "lifelog", "p": "devprojects", "c": "club", "h": "home", "g": "course", "k": "choir",
               "t": "allotment"}
SPACE_STORE = {"kalkzak": "club", "verbouwing": "home", "gebarentaal": "course", "koor": "choir", "moestuin": "allotment"}  # a space that belongs to one store (the rest are projects)
NO_STORE = frozenset({"machine", "acknowledgement", "chit_chat", "off_topic"})


def group_of(prompt: dict, by: str) -> str:
    """A prompt's labelling round ("batch"), its category, or the store it is about ("store"): its expected
    memories' store (key prefix d, l, p, c, h); a silent prompt about nothing stored (tool output, chatter, general
    knowledge): "none"; another silent prompt: club in the club's space, home in the renovation's, devprojects inside
    a project, lifelog outside one."""
    if by == "batch":
        return str(prompt.get("batch", 1))
    if by == "category":
        return prompt["category"]
    keys = list(prompt.get("expect", ())) + list(prompt.get("accept", ()))
    if keys:
        return STORE_OF_KEY[keys[0][0]]
    if prompt["category"] in NO_STORE:
        return "none"
    if prompt.get("space") in SPACE_STORE:
        return SPACE_STORE[prompt["space"]]
    return "devprojects" if prompt.get("space") else "lifelog"
