"""`doctor`'s model check: one request to the configured endpoint, one line saying what is wrong."""
from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bot.model_check import check_model
from bot.settings import Settings
from core.research import compat
from tests.support.fake_anthropic import FakeAnthropic, Turn, text
from tests.support.fake_openai import FakeOpenAI, Reply

KEY = "sk-doctor-canary-0123456789"


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    compat.forget_all()
    yield
    compat.forget_all()


def openai(make_settings: Callable[..., Settings], url: str, **extra: object) -> Settings:
    return make_settings(**({"model_provider": "openai", "openai_base_url": url, "openai_api_key": KEY} | extra))


async def test_a_working_openai_compatible_server(make_settings) -> None:
    async with FakeOpenAI([Reply(content="pong")], api_key=KEY) as server:
        status, line = await check_model(openai(make_settings, server.url))
    assert status == "ok" and "fake-served-model answers" in line
    assert server.bodies[0]["max_tokens"] == 1 and server.bodies[0]["tools"]  # one cheap call that tries tools


async def test_each_problem_is_named_in_one_line(make_settings) -> None:
    async with FakeOpenAI([Reply(content="pong")] * 3, api_key=KEY, reject_tools=True) as server:
        no_tools = await check_model(openai(make_settings, server.url))
        strict = await check_model(openai(make_settings, server.url, model_tools="on"))
    async with FakeOpenAI([Reply(content="pong")] * 3, api_key=KEY) as server:
        wrong_key = await check_model(openai(make_settings, server.url, openai_api_key="sk-wrong"))
        unknown = await check_model(openai(make_settings, server.url, openai_model="no-such-model"))
    unreachable = await check_model(openai(make_settings, "http://user:hunter2@127.0.0.1:9/v1"))
    assert no_tools[0] == "warn" and "refuses tool calls" in no_tools[1] and "--enable-auto-tool-choice" in no_tools[1]
    assert strict[0] == "fail"
    assert wrong_key == ("fail", wrong_key[1]) and "401" in wrong_key[1]
    assert unknown[0] == "fail" and "model not found" in unknown[1]
    assert unreachable[0] == "fail" and "unreachable" in unreachable[1] and "hunter2" not in unreachable[1]
    for _, line in (no_tools, strict, wrong_key, unknown, unreachable):
        assert KEY not in line and "\n" not in line


async def test_an_anthropic_endpoint(make_settings) -> None:
    async with FakeAnthropic([Turn([text("pong")])]) as model:
        status, line = await check_model(make_settings(anthropic_api_key=KEY, anthropic_base_url=model.url))
    assert status == "ok" and line.startswith("anthropic at http://127.0.0.1:")
    assert model.bodies[0]["max_tokens"] == 1
