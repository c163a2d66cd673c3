"""The OpenAI-compatible client: the real `openai` SDK against a local fake Chat Completions server."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from core.research import compat
from core.research.model import Message, ModelUnavailable, TextBlock, ToolResultBlock, ToolSpec, ToolsUnsupported, ToolUse
from core.research.openai_client import OpenAIClient
from core.research.reasoning import visible_text
from tests.support.fake_openai import Fail, FakeOpenAI, Reply, call

SPEC = ToolSpec("search_code", "Search code.", {"type": "object", "properties": {"query": {"type": "string"}}})
QUESTION = (Message("user", (TextBlock("Why does 507015 happen?"),)),)


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    compat.forget_all()
    yield
    compat.forget_all()


def client_for(server: FakeOpenAI, *, model: str | None = "fake-served-model", stream: bool = True, key: str = "") -> OpenAIClient:
    return OpenAIClient(api_key=key, model=model, base_url=server.url, max_retries=1, stream=stream, timeout=10)


@pytest.mark.parametrize("stream", [True, False])
async def test_several_tool_calls_per_turn_then_tool_results_go_back_as_tool_messages(stream: bool) -> None:
    script = [
        Reply(tool_calls=[call("search_code", query="507015"), call("search_code", query="aclrtSynchronizeStream")]),
        Reply(content="It is an AI Core fault."),
    ]
    async with FakeOpenAI(script, cached_tokens=7) as server:
        client = client_for(server, stream=stream)
        first = await client.complete(system="sys", tools=[SPEC], messages=QUESTION)
        assert [(u.name, dict(u.input)) for u in first.tool_uses] == [
            ("search_code", {"query": "507015"}),
            ("search_code", {"query": "aclrtSynchronizeStream"}),
        ]
        assert first.stop_reason == "tool_use"
        assert first.usage.cache_read == 7 and first.usage.input > 0 and first.usage.output > 0
        results = tuple(ToolResultBlock(u.id, f"result {n}") for n, u in enumerate(first.tool_uses))
        history = (*QUESTION, Message("assistant", first.blocks), Message("user", (*results, TextBlock("nudge"))))
        second = await client.complete(system="sys", tools=[SPEC], messages=history)
        await client.aclose()
    assert second.text == "It is an AI Core fault." and not second.tool_uses
    sent = server.bodies[1]
    assert sent["messages"][0] == {"role": "system", "content": "sys"}
    assert sent["tools"][0]["function"]["name"] == "search_code"
    assistant = sent["messages"][2]
    assert [c["id"] for c in assistant["tool_calls"]] == [u.id for u in first.tool_uses]
    assert [m for m in sent["messages"] if m["role"] == "tool"] == [
        {"role": "tool", "tool_call_id": first.tool_uses[0].id, "content": "result 0"},
        {"role": "tool", "tool_call_id": first.tool_uses[1].id, "content": "result 1"},
    ]
    assert sent["messages"][-1] == {"role": "user", "content": "nudge"}  # text after the tool results


async def test_think_blocks_and_reasoning_fields_never_reach_the_text_or_the_stream() -> None:
    content = "<think>The user wants secrets? I recall SECRET-PLAN.</think>Upgrade CANN to 8.5.1."
    async with FakeOpenAI([Reply(content=content, reasoning_content="REASONING-FIELD", piece_chars=3)]) as server:
        client = client_for(server)
        drafts: list[str] = []

        async def on_text(text: str) -> None:
            drafts.append(text)

        reply = await client.complete(system="s", tools=[], messages=QUESTION, on_text=on_text)
        await client.aclose()
    assert reply.text == "Upgrade CANN to 8.5.1."
    assert drafts and drafts[-1] == "Upgrade CANN to 8.5.1."
    assert not any("SECRET" in d or "think" in d or "<" in d or "REASONING" in d for d in drafts)
    assert [len(d) for d in drafts] == sorted(len(d) for d in drafts)  # token by token, growing


def test_visible_text_handles_unclosed_closing_only_and_partial_tags() -> None:
    assert visible_text("<think>still thinking about it") == ""
    assert visible_text("a<think>x</think>b<think>y</think>c") == "abc"
    assert visible_text("reasoning the template opened</think>The answer") == "The answer"
    assert visible_text("Answer <thi", partial=True) == "Answer "
    assert visible_text("Answer <", partial=True) == "Answer "
    assert visible_text("x" * 100_000 + "<think>" * 1000) == "x" * 100_000  # linear on hostile input


async def test_invalid_json_arguments_become_an_arguments_error_not_a_crash() -> None:
    script = [Reply(tool_calls=[call("search_code", raw_arguments='{"query": "5070'), call("search_code", raw_arguments="[1]")])]
    async with FakeOpenAI(script) as server:
        client = client_for(server)
        reply = await client.complete(system="s", tools=[SPEC], messages=QUESTION)
        await client.aclose()
    broken, not_object = reply.tool_uses
    assert broken.arguments_error.startswith("the arguments are not valid JSON") and dict(broken.input) == {}
    assert not_object.arguments_error == "the arguments must be one JSON object"


async def test_a_server_without_tool_calling_raises_tools_unsupported_once_per_process() -> None:
    async with FakeOpenAI([Reply(content="no tools")], reject_tools=True) as server:
        client = client_for(server)
        with pytest.raises(ToolsUnsupported):
            await client.complete(system="s", tools=[SPEC], messages=QUESTION)
        assert client.tools_rejected
        other = client_for(server)  # another client in the same process remembers the refusal
        with pytest.raises(ToolsUnsupported):
            await other.complete(system="s", tools=[SPEC], messages=QUESTION)
        assert server.calls == 1
        reply = await other.complete(system="s", tools=[], messages=QUESTION)  # without tools it answers
        await client.aclose()
        await other.aclose()
    assert reply.text == "no tools"


async def test_unset_model_uses_the_first_listed_model_asked_once() -> None:
    async with FakeOpenAI([Reply(content="one"), Reply(content="two")], models=("qwen3-32b", "other")) as server:
        client = client_for(server, model=None)
        await client.complete(system="s", tools=[], messages=QUESTION)
        await client.complete(system="s", tools=[], messages=QUESTION)
        await client.aclose()
    assert [b["model"] for b in server.bodies] == ["qwen3-32b", "qwen3-32b"]
    assert server.model_list_calls == 1 and client.model == "qwen3-32b"


async def test_a_gateway_refusing_stream_options_is_retried_without_them_and_remembered(caplog) -> None:
    async with FakeOpenAI([Reply(content="one"), Reply(content="two")], reject_stream_options=True) as server:
        client = client_for(server)
        with caplog.at_level("WARNING"):
            assert (await client.complete(system="s", tools=[], messages=QUESTION)).text == "one"
            assert (await client.complete(system="s", tools=[], messages=QUESTION)).text == "two"
        await client.aclose()
    assert ["stream_options" in b for b in server.bodies] == [True, False, False]
    assert sum("refused stream_options" in r.getMessage() for r in caplog.records) == 1


async def test_errors_are_safe_model_unavailable_messages() -> None:
    key = "sk-openai-canary-0123456789abcdef"
    async with FakeOpenAI([Fail(500, "boom " + key)] * 5, api_key=key) as server:
        client = client_for(server, key=key)
        with pytest.raises(ModelUnavailable) as caught:
            await client.complete(system="s", tools=[], messages=QUESTION)
        assert server.calls == 2  # the SDK retried the 5xx once
        wrong = client_for(server, key="wrong-key")
        with pytest.raises(ModelUnavailable) as unauthorised:
            await wrong.complete(system="s", tools=[], messages=QUESTION)
        missing = client_for(server, model="no-such-model", key=key)
        with pytest.raises(ModelUnavailable) as not_found:
            await missing.complete(system="s", tools=[], messages=QUESTION)
        for c in (client, wrong, missing):
            await c.aclose()
    assert "500" in str(caught.value) and key not in str(caught.value)
    assert "401" in str(unauthorised.value)
    assert "404" in str(not_found.value) and "unknown model" in str(not_found.value)


async def test_tool_calls_without_ids_get_ids_that_pair_with_their_results() -> None:
    async with FakeOpenAI([Reply(tool_calls=[call("search_code", query="a"), call("search_code", query="b")], omit_ids=True)]) as server:
        client = client_for(server)
        reply = await client.complete(system="s", tools=[SPEC], messages=QUESTION)
        await client.aclose()
    assert len({u.id for u in reply.tool_uses}) == 2 and all(u.id for u in reply.tool_uses)


def test_arguments_error_survives_the_wire_as_an_empty_object() -> None:
    client = OpenAIClient(api_key="", model="m", base_url="http://127.0.0.1:9/v1")
    params = client.request_params(
        system="s",
        tools=[SPEC],
        messages=[Message("assistant", (ToolUse("c1", "search_code", {}, arguments_error="bad"),))],
        model="m",
    )
    assert json.loads(params["messages"][1]["tool_calls"][0]["function"]["arguments"]) == {}


async def test_a_model_that_wants_max_completion_tokens_gets_the_same_limit_under_that_name() -> None:
    async with FakeOpenAI([Reply(content="one"), Reply(content="two")], reject_max_tokens=True) as server:
        client = client_for(server)
        assert (await client.complete(system="s", tools=[], messages=QUESTION)).text == "one"
        assert (await client.complete(system="s", tools=[], messages=QUESTION)).text == "two"  # remembered
        await client.aclose()
    limits = [(b.get("max_tokens"), b.get("max_completion_tokens")) for b in server.bodies]
    assert limits[0][1] is None and limits[0][0] is not None
    assert limits[1:] == [(None, limits[0][0])] * 2
