"""A model server that sends no usage is still charged: an estimate, said once in the log."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.research import compat
from core.research.build import model_client
from core.research.metering import Metered
from core.research.model import Message, ModelReply, TextBlock, ToolUse, Usage
from core.research.settings import ResearchSettings
from tests.support.fake_openai import FakeOpenAI, Reply

QUESTION = (Message("user", (TextBlock("Why does ACL error 507015 happen on 910B? " * 10),)),)


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    compat.forget_all()
    yield
    compat.forget_all()


async def test_a_server_without_usage_is_charged_an_estimate_and_says_so_once(caplog) -> None:
    # A gateway that refuses stream_options streams no usage chunk at all: the real SDK sees none.
    answer = "Set ASCEND_RT_VISIBLE_DEVICES before starting vllm." * 3
    async with FakeOpenAI([Reply(content=answer), Reply(content=answer)], reject_stream_options=True) as server:
        settings = ResearchSettings(
            _env_file=None, model_provider="openai", openai_base_url=server.url, openai_model="fake-served-model",
            openai_api_key="sk-test", anthropic_api_key=None,
        )
        client = model_client(settings)
        with caplog.at_level("WARNING"):
            first = await client.complete(system="You help Ascend engineers.", tools=[], messages=QUESTION)
            second = await client.complete(system="You help Ascend engineers.", tools=[], messages=QUESTION)
        await client.aclose()
    prompt_chars = len("You help Ascend engineers.") + 1 + len(QUESTION[0].blocks[0].text)
    assert first.usage == second.usage == Usage(input=-(-prompt_chars // 3), output=-(-len(answer) // 3))
    told = [r.getMessage() for r in caplog.records if "reports no token usage" in r.getMessage()]
    assert len(told) == 1 and "characters / 3" in told[0]


class Scripted:
    """A client whose server reports usage (or not) as scripted."""

    model = "scripted"

    def __init__(self, usage: Usage) -> None:
        self.usage = usage

    async def complete(self, *, system, tools, messages, on_text=None) -> ModelReply:
        return ModelReply((TextBlock("ok"), ToolUse("1", "search_code", {"query": "507015"})), "tool_use", self.usage)

    async def aclose(self) -> None:
        return None


async def test_reported_usage_is_kept_and_a_known_tokenizer_replaces_the_character_estimate() -> None:
    reported = Usage(input=11, output=7, cache_read=5)
    assert (await Metered(Scripted(reported)).complete(system="s", tools=[], messages=QUESTION)).usage == reported
    words = Metered(Scripted(Usage()), count_tokens=lambda text: len(text.split()))
    usage = (await words.complete(system="s", tools=[], messages=QUESTION)).usage
    assert usage.input == len(("s\n" + QUESTION[0].blocks[0].text).split())
    assert usage.output == len('ok\nsearch_code {"query": "507015"}'.split())  # tool calls are output too
