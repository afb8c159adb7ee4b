"""An agent noun meets its verb in whisper's overlap filter ("who maintains it?" and "co-maintainer"), through the
real pipeline on a small store. Phrasings invented here, not taken from the bench's scenarios."""

from __future__ import annotations

from whisper.models import WhisperCandidateRow
from whisper.services import whisper_respond


def test_a_maintainer_memory_shares_a_word_with_who_maintains(mem):
    node = mem("Marta Kowalczyk became co-maintainer of quillpad in 2024.", space="quillpad", auto_link=False)
    mem("quillpad stores notes as plain text files.", space="quillpad", auto_link=False)
    result = whisper_respond(prompt="who else maintains quillpad?", session_id="m1", space="quillpad")
    row = WhisperCandidateRow.objects.get(decision_id=result.whisper_log_id, node_uid=node.id)
    assert row.stage != "no_overlap"
