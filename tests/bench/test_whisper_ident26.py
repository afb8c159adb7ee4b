"""bench.whisper_ident26: which prompts each candidate rule measures the identity set's standouts on, and the
variant installed in the bench's process only (today's rule changes nothing)."""

from datetime import UTC, datetime

from bench.whisper_ident26 import asks_rule, install, qualifies
from whisper.conventions import standout_prompt
from whisper.state import WhisperRequest, WhisperRun


def _run(prompt: str, *, about_user: bool = False) -> WhisperRun:
    now = datetime(2026, 11, 30, tzinfo=UTC)
    return WhisperRun(request=WhisperRequest(prompt=prompt), now=now, budget_tokens=400, about_user=about_user)


def test_asks_reads_questions_and_requests_and_leaves_remarks_out():
    assert asks_rule("which vet do we take Biscuit to")
    assert asks_rule("find a restaurant for Friday with Jonas")
    assert not asks_rule("I'm so tired today")
    assert not asks_rule("we got back from Lisbon yesterday")


def test_today_is_the_shipped_rule_and_asks_widens_it():
    question = _run("which vet do we take Biscuit to")  # no first person singular, no task a convention governs
    assert not standout_prompt(question)
    assert not qualifies("today", question, standout_prompt)
    assert qualifies("asks", question, standout_prompt)
    remark = _run("I'm so tired today", about_user=True)
    assert not qualifies("asks", remark, standout_prompt)
    assert qualifies("any", remark, standout_prompt)


def test_a_variant_is_installed_in_the_process_only(monkeypatch):
    import whisper.conventions as conventions
    import whisper.stages.gate as gate
    import whisper.stages.retrieve as retrieve

    for module, name in ((conventions, "standout_prompt"), (conventions, "standout_gate"), (gate, "standout_gate"),
                         (retrieve, "governs_task"), (retrieve, "standouts")):
        monkeypatch.setattr(module, name, getattr(module, name))
    loads = retrieve.governs_task
    install("asks", 4.0)
    assert retrieve.governs_task is not loads
    assert retrieve.governs_task("which vet do we take Biscuit to")
    assert not loads("which vet do we take Biscuit to")
    assert conventions.standout_prompt(_run("which vet do we take Biscuit to"))
    assert gate.standout_gate is conventions.standout_gate


def test_asks_own_z_holds_only_the_prompts_today_does_not_measure_to_the_higher_z():
    from bench.whisper_ident26 import z_for

    task = _run("write the commit msg for this change")  # a task a convention could govern: today's rule
    question = _run("which vet do we take Biscuit to")
    assert standout_prompt(task) and not standout_prompt(question)
    assert z_for(task, standout_prompt, 4.5, None, 6.5) == 4.5
    assert z_for(question, standout_prompt, 4.5, None, 6.5) == 6.5
    assert z_for(question, standout_prompt, 4.5, 4.0, None) == 4.0
    assert z_for(question, standout_prompt, 4.5, None, None) == 4.5
