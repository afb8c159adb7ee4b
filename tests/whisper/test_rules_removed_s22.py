"""Hand rules removed by session 22's audit (issue 11; docs/whisper.md, "Rules audited on fresh batches (session
22)"): each changed no dev prompt of batches 6-13 (all written after it) or cost more fully right prompts there than
it made. These pin that they are gone. The stores and prompts were written for these tests, not taken from the
bench's scenarios."""

from __future__ import annotations

import math

from whisper.conf import WhisperConf
from whisper.stages.retrieve import build_query, named_project, page_probability, prompt_names
from whisper.text import preference_task

from .conftest import intent, make_run, unit


def test_asking_leave_is_no_preference_task():
    # session 9's and 20's _ADVICE ("can I …", "should I …", "kan ik …"): changed no dev prompt of batches 6-13
    assert not preference_task("can I schedule a call with the Boston team at 8pm")
    assert not preference_task("should I split this pull request?")
    assert preference_task("arrange a weekend in Paris for the two of us")  # a request is still a task


def test_a_space_named_by_an_ordinary_word_is_named():
    # session 11's "the docs site" read as the word, not the project: changed no dev prompt of batches 6-13
    assert "docs" in prompt_names("how are the docs published?")
    assert "bakery" in prompt_names("how fresh is the bakery bread?")


def test_several_projects_named_name_none():
    # session 12's invented name winning over an ordinary-word one: changed no dev prompt of batches 6-13
    assert named_project({"tidewater", "docs"}) is None
    assert named_project({"tidewater"}) == "tidewater"


def test_a_page_from_outside_the_project_keeps_recalls_probability():
    # session 10's PAGE_PENALTY log-odds per e-fold of length: cost right answers on dev 6-13
    assert page_probability(0.5, chars=round(math.e * 1000)) == 0.5
    assert page_probability(0.5, chars=9000) == 0.5


def test_a_request_takes_no_preference_route():
    # session 9's preference task: on a request every preference memory came as an identity candidate and faced the
    # preference gate; it cost more fully right prompts than it made on dev 6-13. build_query no longer sets the
    # route (a convention still comes when it stands out, whisper.conventions).
    run = make_run("arrange a weekend in Paris for the two of us", intent=intent(), prompt_vec=unit(1, 0))
    build_query(run, WhisperConf(), deps=None)
    assert not hasattr(run, "preference_task")  # the field and gate.py's preference gate went in session 22 (audit5)


def test_a_possessive_chain_drops_nothing():
    # session 10's possessive chain ("when is Lena's husband's birthday?" asks about the husband): changed no dev
    # prompt of batches 6-13
    from whisper.stages.focus import off_focus

    note = {"title": "Lena's birthday", "content": "My colleague Lena's birthday is on 14 August."}
    assert off_focus("when is Lena's husband's birthday", **note) is None


def test_a_shell_commands_output_is_no_machine_prompt():
    # the <bash-…> prefixes of the machine-prompt exit: silencing the output of a command the person ran (Claude
    # Code's "!" mode) cost right answers on dev 6-12
    from whisper.text import synthetic_match

    assert synthetic_match("<bash-stdout>$ fly status\nMachines  2 stopped</bash-stdout> why did both stop?") is None
    assert synthetic_match("<bash-input>make e2e</bash-input>") is None
    assert synthetic_match("<task-notification>build finished</task-notification>") == "<task-notification>"


def test_a_person_and_a_place_are_no_kinds_asked():
    # session 12's person and place kinds: changed no dev prompt of batches 6-13. (Session 10's amount of money,
    # removed with them, is back since session 24: tests/whisper/test_focus_amount.py.)
    from whisper.kinds import asked_kinds

    assert asked_kinds("who reviews the database migrations?") == frozenset()
    assert asked_kinds("where do we keep the spare house keys?") == frozenset()


def test_a_prompt_on_a_served_topic_goes_on_to_recall():
    # The topic repeat stage (22 Nov) ended a non-follow-up near the session's last prompts in silence when that topic
    # had been served; it silenced no dev prompt of batches 1-13 (their silent:topic_repeat are already_served's) and
    # was removed in session 22 (audit5). Served memories are still dropped by already_served.
    from whisper.pipeline import run_stages
    from whisper.state import RecentPrompt

    from .conftest import NOW, fake_deps

    recent = [RecentPrompt("which greenhouse heater did we order", unit(1.0, 0.1), NOW),
              RecentPrompt("what wattage is the greenhouse heater", unit(1.0, 0.0), NOW)]
    run = make_run("does the greenhouse heater have a frost setting", recent=recent)
    assert run_stages(run, WhisperConf(), fake_deps(embed=lambda text: unit(1.0, 0.05))) == "silent:no_candidates"


def test_words_for_a_partner_are_words_of_their_own():
    # Session 10's same-fact folds (whisper.lexicon.SAME_FACT: "married", "husband", "wife", "girlfriend", ... read
    # as "partner" everywhere whisper compares words) changed no dev prompt of batches 6-13 and were removed in
    # session 22 (audit5): a business partner no longer shares a word with a question about a wife either.
    from whisper.text import fold, question_focus, topic_tokens

    assert fold("wife") != fold("partner") and fold("husband") != fold("partner")
    assert not topic_tokens("Adyen is our payment partner for card payments.") & question_focus("what's my wife called?")


def test_a_recap_of_a_period_faces_the_gate_like_any_prompt():
    # The broad recap (22 Nov: a temporal recap with a time window skipped the floor for recall's temporal hits,
    # the overlap filter, the gate and the focus stage, newest first) changed no dev prompt of batches 6-13 and was
    # removed in session 22 (audit5).
    from whisper.stages.gate import injection_gate
    from whisper.stages.retrieve import build_query

    from .conftest import cand, fake_deps

    run = make_run("what did we do yesterday?", intent=intent("temporal"), prompt_vec=unit(1.0))
    build_query(run, WhisperConf(), fake_deps())
    run.candidates = [cand("groceries", cosine=0.05, probability=0.02)]
    run.pool = list(run.candidates)
    assert injection_gate(run, WhisperConf(), fake_deps()) == "silent:below_gate"
