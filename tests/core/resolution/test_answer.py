"""Which resolved thread leads an offline answer, and what the lead says."""
from __future__ import annotations

from core.index.passage import Passage
from core.resolution.answer import find, lead
from core.resolution.extract import extract_repository
from core.resolution.focus import focus
from core.resolution.memory import ResolutionMemory
from core.triage import triage

from tests.core.resolution.conftest import REPO, thread

NUMPY = "AttributeError: module 'numpy' has no attribute 'float'"


def memory() -> ResolutionMemory:
    threads = [
        thread(1, f"boot fails\n{NUMPY}", ("maint", "MEMBER", "CANN needs numpy below 2: run `pip install numpy<2.0`."),
               ("alice", "NONE", "works now, thanks")),
        thread(2, f"same on 310P\n{NUMPY}", ("maint", "MEMBER", "Duplicate of #1")),
        thread(3, f"again\n{NUMPY}"),  # open, nothing said
        thread(4, "graph mode hangs with --enable-prefix-caching on 910B", ("maint", "MEMBER", "Fixed by #5, set `--enforce-eager` until then")),
        thread(5, "Fixes #4", kind="pull", merged=True, title="fix prefix caching in graph mode"),
    ]
    return ResolutionMemory(extract_repository(threads).values())


def passage(number: int, text: str, kind: str = "issues", score: float = 1.0) -> Passage:
    return Passage(REPO, f"{kind}/{number}", f"#{number}", f"https://github.com/{REPO}/issues/{number}", "issue", 1, 5, score, text)


def test_a_pasted_traceback_meets_the_thread_with_its_signature() -> None:
    question = focus(f"help, my 910B server dies:\n```\nTraceback (most recent call last):\n  File \"x.py\", line 1\n{NUMPY}\n```")
    match = find(memory(), question, (REPO,), ())
    assert match is not None and match.via == "signature" and match.record.number == 1  # confirmed beats open/duplicate
    assert (match.seen, match.resolved_alike) == (3, 2)
    text, sources = lead(match, "en")
    assert text.startswith("**Resolved before** (vllm-ascend #1, a maintainer, confirmed by the reporter):")
    assert "`pip install numpy<2.0`" in text and f"Keyed on `{NUMPY}`: seen in 3 vllm-ascend thread(s), 2 resolved." in text
    assert [s.url for s in sources] == [f"https://github.com/{REPO}/issues/1"]


def test_a_searched_thread_leads_only_when_it_stands_out() -> None:
    mem = memory()
    found = passage(4, "graph mode hangs with --enable-prefix-caching on 910B", score=9.0)
    asked = focus("with --enable-prefix-caching my 910B hangs in graph mode")
    match = find(mem, asked, (REPO,), [found, passage(3, "again", score=3.0)])
    assert match is not None and match.via == "search" and match.record.fixed_by == (5,)
    zh, _ = lead(match, "zh")
    assert zh.startswith("**已有解决记录**（vllm-ascend #4，维护者）") and "#5" in zh
    assert find(mem, asked, (REPO,), [found, passage(3, "again", score=8.5)]) is None  # a near tie: neither leads
    assert find(mem, focus("graph mode hangs sometimes, why"), (REPO,), [found]) is None  # a lone hit sharing nothing rare
    assert find(mem, asked, (REPO,), [passage(3, "again", score=9.0), found]) is None  # only the top thread may lead


def test_other_repositories_threads_do_not_lead() -> None:
    assert find(memory(), focus(NUMPY), ("verylucky01/MindIE-LLM",), ()) is None


def test_the_offline_answer_leads_with_the_resolution_and_cites_the_thread() -> None:
    match = find(memory(), focus(f"startup fails: {NUMPY}"), (REPO,), ())
    result = triage(f"startup fails: {NUMPY}", (REPO,), "en", resolution=match)
    assert result.text.startswith("**Resolved before**")
    assert "No known failure signature matched" not in result.text
    assert result.sources[0].url == f"https://github.com/{REPO}/issues/1"


def test_the_research_prompt_wraps_a_resolution_lead_as_untrusted_quoted_text() -> None:
    from core.research.prompts import user_turn

    match = find(memory(), focus(f"startup fails: {NUMPY}"), (REPO,), ())
    offline = triage(f"startup fails: {NUMPY}", (REPO,), "en", resolution=match)
    prompt = user_turn(question="q", language="en", repos=(REPO,), known_env={}, triage_markdown=offline.text,
                       user="u", channel="c", today="2026-12-03")
    diagnostic = prompt.split("<offline_diagnostic>", 1)[1].split("</offline_diagnostic>", 1)[0]
    assert "Resolved before" not in diagnostic and "pip install numpy" not in diagnostic
    wrapped = prompt.split('trust="untrusted"', 1)[1]
    assert "**Resolved before**" in wrapped and "pip install numpy<2.0" in wrapped


def test_only_a_closing_pull_request_is_called_the_fix() -> None:
    closing = memory()
    match = find(closing, focus("x"), (REPO,), [passage(4, "--enable-prefix-caching 910B graph", score=9.0), passage(3, "y", score=1.0)])
    assert match is not None and "Fixed by #5 (not yet in a release tag of the clone)." in lead(match, "en")[0]
    named = ResolutionMemory(extract_repository([
        thread(8, "graph mode hangs with --enable-prefix-caching", ("maint", "MEMBER", "Support for this landed in #580, try v0.9.1")),
    ]).values())
    match = find(named, focus("x"), (REPO,), [passage(8, "--enable-prefix-caching graph", score=9.0), passage(3, "y", score=1.0)])
    assert match is not None
    text = lead(match, "en")[0]
    assert "Pull request named in the thread: #580" in text and "Fixed" not in text


async def test_a_pasted_log_answer_names_the_line_it_keyed_on(redis, keys) -> None:  # type: ignore[no-untyped-def]
    from core.conversation import Conversation
    from core.messages import InboundMessage
    from core.session import RedisSessionStore

    log = "\n".join(["vllm-ascend serve on 910B dies:", "```", "Traceback (most recent call last):",
                     '  File "/x/y.py", line 3, in z', "    import foo",
                     "ModuleNotFoundError: No module named 'vllm_ascend._cann_ops_custom'", "```"])
    reply = await Conversation(RedisSessionStore(redis, keys, 60)).handle(
        InboundMessage("terminal", "w", "c", "t", "u", log, "e1", "e1", True))
    assert reply.text.startswith("Read from your log: `ModuleNotFoundError: No module named 'vllm_ascend._cann_ops_custom'`")


def test_a_related_thread_shows_how_it_was_resolved_instead_of_an_excerpt() -> None:
    from core.resolution.answer import record_of, thread_outcome

    mem = memory()
    resolved, opened = passage(1, "boot fails AttributeError numpy"), passage(3, "again numpy float")
    line = thread_outcome(record_of(mem, resolved), "en")
    assert line.startswith("Resolved there (a maintainer, confirmed by the reporter):") and "numpy<2.0" in line
    assert thread_outcome(record_of(mem, opened), "en") == ""  # nothing said: the excerpt stays
    assert "Fixed by #5" in thread_outcome(record_of(mem, passage(4, "graph mode hangs")), "en")
    assert thread_outcome(record_of(mem, resolved), "zh").startswith("该帖的解决方式（维护者，提问者确认有效）：")
    # Alike only in words (an ImportError of another library): its fix would read as this question's fix.
    assert thread_outcome(record_of(mem, resolved), "en", "ImportError: libother.so: cannot open", resolved.text) == ""
    assert thread_outcome(record_of(mem, resolved), "en", "numpy.float is gone after pip install", "numpy.float removed") == line
    out = triage("my server fails with numpy", [REPO], "en", passages=[resolved, opened],
                 thread_outcomes={resolved.url: line})
    assert line in out.text and "again numpy float" in out.text  # the unresolved thread keeps its excerpt


def test_a_no_to_support_is_dated_and_hedged_wherever_it_is_shown() -> None:
    from dataclasses import replace

    from core.resolution.answer import Match, lead, thread_outcome
    from core.resolution.record import Certainty, Resolution

    denial = Resolution(REPO, 7, f"https://github.com/{REPO}/issues/7", "300I Duo support", "closed", "issue",
                        Certainty.MAINTAINER, "maintainer", "maint", "300I Duo is not supported at this point.",
                        said_at="2025-05-02")
    shown, _ = lead(Match(denial, "search", "", 0, 0), "en")
    assert "(said on 2025-05-02; support may have come since" in shown
    assert "2025-05-02 的说法" in thread_outcome(denial, "zh")
    assert "an earlier statement" in thread_outcome(replace(denial, said_at=""), "en")
    fix = replace(denial, summary="Downgrade numpy: pip install numpy<2.0")
    assert "said on" not in lead(Match(fix, "search", "", 0, 0), "en")[0]  # only a "not supported" is a statement about its day
