"""Resolution records: who resolved a thread, how, and how sure, without a model."""
from __future__ import annotations

from core.resolution.extract import extract, extract_repository, maintainers_of
from core.resolution.record import Certainty, Resolution

from tests.core.resolution.conftest import REPO, thread

NUMPY = "startup fails:\nAttributeError: module 'numpy' has no attribute 'float'"


def test_a_maintainer_fix_confirmed_by_the_reporter_ranks_highest() -> None:
    t = thread(1, NUMPY,
               ("bob", "NONE", "same here"),
               ("maint", "MEMBER", "Could you share your env?"),
               ("maint", "MEMBER", "CANN needs numpy below 2. Downgrade it: `pip install numpy<2.0` and restart."),
               ("alice", "NONE", "Thanks, it works now!"))
    record = extract(t, frozenset())
    assert (record.said_by, record.author, record.certainty, record.confirmed) == ("maintainer", "maint", Certainty.CONFIRMED, True)
    assert "pip install numpy<2.0" in record.fix_items and "Downgrade" in record.summary
    assert record.signatures == ("AttributeError: module 'numpy' has no attribute 'float'",) and record.resolved


def test_a_question_back_is_not_a_fix_and_the_reporters_own_workaround_counts() -> None:
    t = thread(2, NUMPY, ("maint", "MEMBER", "Can you share the full log?"),
               ("alice", "NONE", "Solved after downgrading: `pip install numpy==1.26.4`"))
    record = extract(t, frozenset())
    assert (record.said_by, record.certainty) == ("reporter", Certainty.REPORTER)
    assert record.fix_items == ("pip install numpy==1.26.4",)


def test_someone_elses_workaround_is_labelled_and_ranks_below_the_reporter() -> None:
    record = extract(thread(3, NUMPY, ("carol", "CONTRIBUTOR", "Workaround: set `VLLM_USE_V1=0` and it runs")), frozenset())
    assert (record.said_by, record.certainty) == ("user", Certainty.OTHER)
    closed = extract(thread(4, NUMPY), frozenset())
    assert closed.certainty == Certainty.CLOSED and not closed.resolved


def test_pull_requests_close_issues_and_lend_them_a_maintainer_fix() -> None:
    issue = thread(10, NUMPY, ("alice", "NONE", "any update?"))
    pr = thread(11, "Fixes #10. Pin numpy.", title="[Bugfix] pin numpy", kind="pull", merged=True, author="dev")
    unmerged = thread(12, "Fixes #10", kind="pull", merged=False)
    records = extract_repository([issue, pr, unmerged])
    assert records[10].fixed_by == (11,) and records[10].certainty == Certainty.MAINTAINER and records[10].resolved
    assert records[11].fixes == (10,) and records[11].summary == "(Bugfix) pin numpy"  # title as plain text


def test_gitcode_maintainers_are_the_configured_and_the_busy_answerers() -> None:
    threads = [thread(n, "x", ("helper", "", "try this"), author=f"user{n}") for n in range(1, 4)]
    threads.append(thread(9, "x", ("alice", "", "me too"), author="bob"))
    assert maintainers_of(threads, ["lead"]) == frozenset({"helper", "lead"})
    github = [thread(n, "x", ("busy", "CONTRIBUTOR", "+1"), author=f"u{n}") for n in range(1, 5)]
    assert maintainers_of(github) == frozenset()  # GitHub's association is final there


def test_planted_links_and_mentions_never_reach_a_record() -> None:
    t = thread(5, NUMPY, ("maint", "MEMBER",
               "Fixed: upgrade to v0.9.1, details at [the fix](https://evil.example/x) or HTTPS://EVIL.COM/y evil.example/z @channel"),
               title="[click me](https://evil.example) **urgent**")
    record = extract(t, frozenset())
    text = f"{record.summary} {record.title} {' '.join(record.fix_items)}"
    assert "evil" not in text.lower() and "](" not in text and "**" not in text and "@channel" not in text
    assert record.url == f"https://github.com/{REPO}/issues/5"


def test_records_round_trip_through_json() -> None:
    record = extract(thread(6, NUMPY, ("maint", "OWNER", "Fixed by #7, upgrade to v0.9.1")), frozenset())
    assert Resolution.from_json(record.to_json()) == record and record.fixed_by == (7,)


def test_the_reporters_own_fix_in_a_comment_or_under_a_fix_heading_in_the_report() -> None:
    in_comment = extract(thread(20, NUMPY, ("maint", "MEMBER", "Which CANN?"),
                                ("alice", "NONE", "Temporary workaround: set `COMPILE_CUSTOM_KERNELS=0` before pip install.")), frozenset())
    assert (in_comment.said_by, in_comment.certainty) == ("reporter", Certainty.REPORTER)
    assert "COMPILE_CUSTOM_KERNELS=0" in in_comment.fix_items
    in_body = extract(thread(21, "ImportError: ascend_transport.so: cannot open shared object file\n\nFix:\nexport LD_LIBRARY_PATH=/usr/local/lib"),
                      frozenset())
    assert in_body.said_by == "reporter" and "LD_LIBRARY_PATH" in in_body.summary
    assert extract(thread(22, "It fails.\n\nFix: none found yet"), frozenset()).said_by == "none"  # a heading with nothing named


def test_questions_back_and_bot_comments_are_never_a_maintainers_resolution() -> None:
    t = thread(30, NUMPY, ("rota", "MEMBER", "Any progress on this? Is it fixed in a newer release?"), state="open")
    record = extract(t, frozenset())
    assert (record.said_by, record.summary) == ("none", "") and not record.resolved
    bot = extract(thread(31, NUMPY, ("ci-helper[bot]", "NONE", "Fixed: set `VLLM_USE_V1=0` and it runs")), frozenset())
    assert bot.said_by == "none"
    answered = extract(thread(32, NUMPY, ("rota", "MEMBER", "Is this still open? Downgrade numpy: `pip install numpy<2.0`.")), frozenset())
    assert answered.said_by == "maintainer" and "numpy<2.0" in answered.summary  # a question next to a fix still counts


def test_a_workaround_another_person_confirms_counts_without_a_named_flag() -> None:
    t = thread(33, "device error with two engines", ("maint", "MEMBER", "Please open a new issue if anything else comes up."),
               ("alice", "NONE", "Using the mp backend instead of ray avoids the device error."),
               ("bob", "NONE", "It works now!"), state="open")
    record = extract(t, frozenset())
    assert (record.said_by, record.certainty) == ("reporter", Certainty.REPORTER) and "mp backend" in record.summary
    unconfirmed = extract(thread(34, "device error", ("alice", "NONE", "Using the mp backend instead of ray might avoid it.")), frozenset())
    assert unconfirmed.said_by == "none"  # nothing named and nobody said it worked


def test_a_summary_does_not_start_with_the_person_it_answers() -> None:
    record = extract(thread(35, NUMPY, ("maint", "MEMBER", "@alice @bob Fixed in the newest release: upgrade to v0.9.1.")), frozenset())
    assert record.summary.startswith("Fixed in the newest release") and "alice" not in record.summary


def test_a_guide_a_maintainer_opened_is_their_word_closed_and_only_a_plan_open() -> None:
    body = ("### Prefix caching\nFor usage follow the [vLLM docs](https://docs.vllm.ai/en/latest/features/apc.html).\n"
            "> [!NOTE]\n>\n> Prefix caching here needs **`block_size >= 128`**.")
    maintainers = maintainers_of([thread(41, "x", ("lead", "MEMBER", "Fixed in v0.9.1, upgrade."), author="bob")])
    guide = extract(thread(40, body, title="[Guide]: prefix caching", author="lead"), maintainers)
    assert (guide.said_by, guide.certainty) == ("maintainer", Certainty.MAINTAINER)
    assert "needs `block_size >= 128`" in guide.summary and "vLLM docs: features/apc" in guide.summary and "*" not in guide.summary
    plan = extract(thread(42, body, title="[RFC]: prefix caching", author="lead", state="open"), maintainers)
    assert plan.certainty == Certainty.OTHER  # an open plan never leads (leads need the reporter's word or better)
    assert extract(thread(43, body, author="stranger"), maintainers).said_by == "none"


def test_the_reporters_own_diagnosis_counts_without_a_named_flag_but_not_a_failed_attempt() -> None:
    found = extract(thread(44, "VL model hangs", ("alice", "NONE", "The problem was in my own script; following the tutorial works.")),
                    frozenset())
    assert (found.said_by, found.certainty) == ("reporter", Certainty.REPORTER)
    failed = extract(thread(45, "VL model hangs", ("alice", "NONE", "The problem was not solved by upgrading, it still hangs.")),
                     frozenset())
    assert failed.said_by == "none"


def test_a_record_keeps_the_day_its_words_were_said() -> None:
    record = extract(thread(20, "does 300I Duo work?", ("maint", "MEMBER", "300I Duo is not supported at this point.")), frozenset())
    assert record.said_at == "2026-01-01" and Resolution.from_json(record.to_json()) == record
    pr = extract(thread(21, "Fixes #20", kind="pull", merged=True), frozenset())
    assert pr.said_at == ""  # an open-ended fixture PR has no closing day
