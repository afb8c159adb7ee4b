"""The inbox's word diff on long repetitive memories (session 23, review11: difflib's diff could hold the request)."""

from __future__ import annotations

import re

from tests.ui.test_inbox import propose

VOCAB = ("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon "
         "phi chi psi omega one two three four five six seven eight nine ten red orange yellow green blue indigo "
         "violet black white grey brown pink cyan magenta olive teal").split()


def test_a_merge_of_two_long_repetitive_memories_renders_its_diff(ui, mem):
    """Two long memories of 50 repeated words, one word changed: the card shows that word struck and added (difflib
    took the longest shifted run first and showed a whole cycle of 50 words removed, and added at the cut)."""
    words = [VOCAB[n % 50] for n in range(7000)]
    changed = list(words)
    changed[300] = "vermilion"
    keep = mem(" ".join(words), auto_link=False)
    gone = mem(" ".join(changed), auto_link=False)
    propose("merge", (keep.id, gone.id), {"keep_id": keep.id, "discard_id": gone.id, "merged_title": None,
                                           "merged_content": None}, score=0.97)
    html = ui.get("/inbox/").content.decode()
    diff = re.search(r'<p class="diff">(.*?)</p>', html, re.S).group(1)
    assert "teal <del>vermilion</del><ins>alpha</ins> beta" in diff  # the one word changed, nothing else near it
