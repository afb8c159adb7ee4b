"""On a follow-up, the memory the session was already served does not set the best hit and the margin the logistic
gate measures the other hits by (whisper.stages.gate.served_apart; session 19, issue 11). The case is the whisper
bench's dev follow-up wf26 ("and what does CI actually run on each of them" after "which python versions does gpxkit
support?") as the gate sees it (its probabilities and cosines); dev only, never a test-split prompt."""

from __future__ import annotations

from types import SimpleNamespace

from whisper.stages.gate import injection_gate, served_apart

from .conftest import cand, fake_deps, intent, make_run

PROMPT = "and what does CI actually run on each of them"


def pool():
    # wf26's candidates at the gate, in kind: the note the previous prompt was served (supported Pythons), the one
    # that answers (the CI note), and a weaker note of the project.
    return [cand("pythons", probability=0.66, cosine=0.82), cand("ci", probability=0.61, cosine=0.72),
            cand("release", probability=0.18, cosine=0.38)]


def test_the_served_memory_does_not_stand_over_the_follow_ups_answer(conf):
    run = make_run(PROMPT, pool=pool(), intent=intent(), follow_up=True)
    injection_gate(run, conf, fake_deps(served=lambda: frozenset({"pythons"})))
    # the CI note is the best of the hits not yet served: -4.200 + 1.353*0.61 + 3.545*0.72 + 0.909 + 1.966*(0.61 -
    # 0.18) = 0.9321 (measured against the served note, not the best: 0.0231, under the gate's 0.33)
    ci = next(c for c in run.candidates if c.node_id == "ci")
    assert ci.gate_score == 0.9321
    assert {c.node_id for c in run.pool} == {"pythons", "ci"}  # already_served drops the served one next


def test_a_prompt_that_is_no_follow_up_measures_every_hit_against_the_best(conf):
    run = make_run(PROMPT, pool=pool(), intent=intent(), follow_up=False)
    injection_gate(run, conf, fake_deps(served=lambda: frozenset({"pythons"})))
    assert [c.node_id for c in run.pool] == ["pythons"]


def test_only_a_follow_up_in_a_session_sets_its_served_memories_apart():
    deps = SimpleNamespace(served=lambda: frozenset({"n1"}))

    def run(follow_up, session_id):
        return SimpleNamespace(follow_up=follow_up, request=SimpleNamespace(session_id=session_id))

    assert served_apart(run(True, "s"), deps) == frozenset({"n1"})
    assert served_apart(run(False, "s"), deps) == frozenset()
    assert served_apart(run(True, None), deps) == frozenset()
    assert served_apart(run(True, "s"), None) == frozenset()
