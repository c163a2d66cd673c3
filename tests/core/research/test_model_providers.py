"""The research agent on other providers: an OpenAI-compatible server (with and without tool
calling), a partial Anthropic-compatible server, MODEL_TOOLS, and streamed drafts.

Real SDKs against local fakes; real tools (git clone, fake GitHub, fake DeepWiki) behind the registry.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bot.settings import Settings
from core.messages import DRAFT_STAGE, Progress
from core.research import build_research_agent, compat
from core.research.drafts import DraftReporter
from tests.support.fake_anthropic import FakeAnthropic, Turn, text, thinking, tool
from tests.support.fake_openai import FakeOpenAI, Reply, call, tool_messages, user_text
from tests.core.research.test_agent import ISSUE_URL, PERMALINK, REPO, Backends, backends, request  # noqa: F401

FABRICATED = "https://github.com/vllm-project/vllm-ascend/issues/424242"


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    compat.forget_all()
    yield
    compat.forget_all()


def openai_settings(make_settings: Callable[..., Settings], server: FakeOpenAI, b: Backends, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "model_provider": "openai",
        "openai_base_url": server.url,
        "openai_model": None,
        "anthropic_api_key": None,
        "github_api_url": b.github.url,
        "gitcode_api_url": b.gitcode.api_url,
        "deepwiki_mcp_url": b.deepwiki.url,
        "repos_dir": b.repos_dir,
        "research_max_steps": 6,
        "research_deadline_seconds": 60.0,
    }
    values.update(overrides)
    return make_settings(**values)


async def run(settings: Settings, redis: Any, keys: Any, **request_overrides: Any):
    agent = build_research_agent(settings, redis, keys)
    assert agent is not None
    updates: list[Progress] = []

    async def progress(update: Progress) -> None:
        updates.append(update)

    try:
        outcome = await agent.answer(request(**request_overrides), progress)
    finally:
        await agent.aclose()
    return outcome, updates


def cite_permalink(body: dict[str, Any]) -> Reply:
    """A model that cites the permalink its search_code call returned, plus one it made up."""
    link = PERMALINK.search("\n".join(tool_messages(body)))
    assert link, "the tool result must reach the model as a tool message"
    return Reply(
        content=f"<think>maybe cite {FABRICATED}</think>In vllm-ascend the error is raised at {link.group(0)}; "
        f"see also [#424242]({FABRICATED}).",
        piece_chars=5,
        piece_interval=0.02,  # a model writing ~250 characters a second: several throttled drafts
    )


async def test_openai_server_scripting_search_code_gives_verified_sources(make_settings, redis, keys, backends: Backends) -> None:
    script = [Reply(tool_calls=[call("search_code", repo=REPO, query="507015")], content="<think>plan</think>"), cite_permalink]
    async with FakeOpenAI(script) as server:
        outcome, updates = await run(openai_settings(make_settings, server, backends), redis, keys)
    assert outcome.ok, outcome.error
    assert any(PERMALINK.fullmatch(s.url) for s in outcome.sources)
    assert FABRICATED not in outcome.text and "<think>" not in outcome.text and "maybe cite" not in outcome.text
    drafts = [u.text for u in updates if u.stage == DRAFT_STAGE]
    assert drafts and "In vllm-ascend the error".startswith(drafts[0])  # the tool turn showed no draft
    # the permalink streams as plain, broken text: clickable only once the final answer verified it
    assert len(drafts) >= 2 and drafts[-1].startswith("In vllm-ascend the error is raised at https[:]//github[.]com/")
    assert not any("://" in d for d in drafts)
    assert not any("think" in d or "plan" in d for d in drafts)
    assert server.bodies[0]["model"] == "fake-served-model" and server.bodies[0]["tools"]


async def test_invalid_tool_arguments_reach_the_model_as_an_error_result(make_settings, redis, keys, backends: Backends) -> None:
    def answer(body: dict[str, Any]) -> Reply:
        result = tool_messages(body)[0]
        return Reply(content="noted: " + ("invalid arguments" if "Invalid arguments for search_code" in result else "??"))

    script = [Reply(tool_calls=[call("search_code", raw_arguments='{"repo": "vllm-project/vllm-ascend", "query": ')]), answer]
    async with FakeOpenAI(script) as server:
        outcome, _ = await run(openai_settings(make_settings, server, backends), redis, keys)
    assert outcome.ok and outcome.text.startswith("noted: invalid arguments")
    assert [s.ok for s in outcome.trace if s.kind == "tool"] == [False]


def answer_from_retrieval(body: dict[str, Any]) -> Reply:
    """A tool-less model that writes from the retrieval results in its prompt."""
    assert "tools" not in body
    prompt = user_text(body)
    assert 'trust="untrusted"' in prompt and "Tools are not available" in prompt
    link = PERMALINK.search(prompt)
    issue = ISSUE_URL if ISSUE_URL in prompt else "(no issue)"
    return Reply(content=f"From the bot's retrieval: {link.group(0) if link else '(no code)'} and {issue}; also {FABRICATED}.")


async def test_server_refusing_tools_falls_back_to_the_bots_own_retrieval(make_settings, redis, keys, backends: Backends) -> None:
    async with FakeOpenAI(answer_from_retrieval, reject_tools=True) as server:
        settings = openai_settings(make_settings, server, backends)
        outcome, _ = await run(settings, redis, keys)
        assert outcome.ok, outcome.error
        urls = [s.url for s in outcome.sources]
        assert ISSUE_URL in urls and any(PERMALINK.fullmatch(u) for u in urls)
        assert FABRICATED not in outcome.text
        assert {s.tool for s in outcome.trace if s.kind == "tool"} >= {"lookup_diagnostics", "search_code", "search_issues"}
        # The refusal is remembered: the next answer sends no tools at all.
        again, _ = await run(settings, redis, keys)
    assert again.ok and ["tools" in b for b in server.bodies] == [True, False, False]


async def test_model_tools_off_never_sends_tools(make_settings, redis, keys, backends: Backends) -> None:
    async with FakeOpenAI(answer_from_retrieval) as server:
        outcome, _ = await run(openai_settings(make_settings, server, backends, model_tools="off"), redis, keys)
    assert outcome.ok and ISSUE_URL in [s.url for s in outcome.sources]
    assert server.calls == 1 and "tools" not in server.bodies[0]


async def test_a_model_that_ignores_tools_gets_the_retrieval_answer(make_settings, redis, keys, backends: Backends) -> None:
    script = [Reply(content=f"Just upgrade, see {FABRICATED}."), answer_from_retrieval]
    async with FakeOpenAI(script) as server:
        outcome, updates = await run(openai_settings(make_settings, server, backends), redis, keys)
    assert outcome.ok and outcome.text.startswith("From the bot's retrieval")
    assert ISSUE_URL in [s.url for s in outcome.sources]
    drafts = [u.text for u in updates if u.stage == DRAFT_STAGE]
    assert "" in drafts and drafts.index("") < len(drafts) - 1  # the ignored answer's draft was withdrawn
    assert server.calls == 2


async def test_model_tools_on_reports_a_refusal_instead_of_falling_back(make_settings, redis, keys, backends: Backends) -> None:
    async with FakeOpenAI(answer_from_retrieval, reject_tools=True) as server:
        outcome, _ = await run(openai_settings(make_settings, server, backends, model_tools="on"), redis, keys)
    assert not outcome.ok and "tools refused" in outcome.error


async def test_partial_anthropic_server_refusing_cache_markers_and_thinking_still_answers(
    make_settings, redis, keys, backends: Backends, caplog
) -> None:
    script = [
        Turn([thinking("plan"), tool("search_issues", repo=REPO, query="507015")]),
        Turn([text(f"Upgrade CANN ([#1234]({ISSUE_URL})).")]),
    ]
    async with FakeAnthropic(script, refuse=("cache_control", "thinking")) as model:
        settings = make_settings(
            anthropic_api_key="sk-ant-test-0000",
            anthropic_base_url=model.url,
            github_api_url=backends.github.url,
            gitcode_api_url=backends.gitcode.api_url,
            deepwiki_mcp_url=backends.deepwiki.url,
            repos_dir=backends.repos_dir,
        )
        with caplog.at_level("WARNING"):
            outcome, _ = await run(settings, redis, keys)
    assert outcome.ok, outcome.error
    assert [s.url for s in outcome.sources] == [ISSUE_URL]
    # 1: refused (cache markers), 2: ok, 3: refused (thinking block sent back), 4: ok
    assert model.calls == 4
    assert '"cache_control"' not in str(model.bodies[2]) and '"cache_control"' not in str(model.bodies[3])
    dropped = [r.getMessage() for r in caplog.records if "refused" in r.getMessage()]
    assert len(dropped) == 2 and "cache_control" in dropped[0] and "thinking" in dropped[1]


async def test_draft_reporter_throttles_and_clears() -> None:
    sent: list[str] = []
    now = [0.0]

    async def progress(update: Progress) -> None:
        assert update.stage == DRAFT_STAGE
        sent.append(update.text)

    drafts = DraftReporter(progress, "en", clock=lambda: now[0])
    await drafts.update("Hello")  # the first text goes out at once
    await drafts.settle()
    await drafts.update("Hello" + "x" * 100)  # too soon
    now[0] = 0.5
    await drafts.update("Hello" + "x" * 10)  # late enough, too little new text
    await drafts.update("Hello" + "x" * 60)
    await drafts.settle()
    await drafts.clear()
    await drafts.clear()  # nothing visible: no second clear
    assert sent == ["Hello", "Hello" + "x" * 60, ""]


async def test_a_stuck_platform_edit_does_not_hold_up_the_stream() -> None:
    release = asyncio.Event()

    async def progress(update: Progress) -> None:
        await release.wait()

    drafts = DraftReporter(progress, "en")
    await asyncio.wait_for(drafts.update("first text"), 0.5)  # returns while the edit hangs
    await asyncio.wait_for(drafts.update("first text and much more text arriving meanwhile" * 3), 0.5)
    release.set()
    await drafts.settle()


async def test_the_eval_judge_runs_on_an_openai_compatible_model(make_settings) -> None:
    from bot.eval.judge import build_judge  # noqa: PLC0415

    verdict = {"facts": ["full"], "wrong": [], "usefulness": "useful", "why": "w"}
    async with FakeOpenAI([Reply(content="<think>hmm</think>" + __import__("json").dumps(verdict))]) as server:
        judge = build_judge(make_settings(model_provider="openai", openai_base_url=server.url))
        try:
            grading = await judge.grade("q", ("vllm-project/vllm-ascend",), ("fact",), "answer", ())
        finally:
            await judge.aclose()
    assert judge.config.provider == "openai"
    assert grading.error == "" and grading.verdict is not None
    assert "tools" not in server.bodies[0]


def anthropic_settings(make_settings: Callable[..., Settings], model: FakeAnthropic, b: Backends) -> Settings:
    return make_settings(
        anthropic_api_key="sk-ant-test-0000",
        anthropic_base_url=model.url,
        github_api_url=b.github.url,
        gitcode_api_url=b.gitcode.api_url,
        deepwiki_mcp_url=b.deepwiki.url,
        repos_dir=b.repos_dir,
    )


async def test_anthropic_streams_drafts_and_a_tool_turn_withdraws_its_text(make_settings, redis, keys, backends: Backends) -> None:
    answer_text = "Upgrade CANN to 8.5.1 " + "because the matrix row says so. " * 6 + f"([#1234]({ISSUE_URL}))."
    script = [
        Turn([text("Let me search the issues first."), tool("search_issues", repo=REPO, query="507015")]),
        Turn([text(answer_text)]),
    ]
    async with FakeAnthropic(script) as model:
        outcome, updates = await run(anthropic_settings(make_settings, model, backends), redis, keys)
    assert outcome.ok
    drafts = [u.text for u in updates if u.stage == DRAFT_STAGE]
    # the tool turn's text was shown, then withdrawn before any tool ran; then the answer streamed
    assert drafts[0].startswith("Let me") and drafts[1] == ""
    stages = [u.stage for u in updates]
    assert stages.index("tool") > stages.index(DRAFT_STAGE) + 1
    assert drafts[-1] and answer_text.startswith(drafts[-1]) and "Let me" not in drafts[-1]


async def test_anthropic_compatible_server_refusing_tools_answers_from_retrieval(make_settings, redis, keys, backends: Backends) -> None:
    def from_prompt(body: dict[str, Any]) -> Turn:
        prompt = json.dumps(body["messages"][-1])
        return Turn([text(f"Per the issue tracker: [#1234]({ISSUE_URL}).")]) if ISSUE_URL in prompt else Turn([text("nothing")])

    async with FakeAnthropic(from_prompt, refuse=("tools",)) as model:
        outcome, _ = await run(anthropic_settings(make_settings, model, backends), redis, keys)
    assert outcome.ok and [s.url for s in outcome.sources] == [ISSUE_URL]
    assert ["tools" in b for b in model.bodies] == [True, False]
