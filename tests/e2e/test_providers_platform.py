"""An OpenAI-compatible model behind a platform adapter, end to end: a Telegram DM POSTed to the
real web app, the worker running the real core with the research agent, the real `openai` SDK
streaming from a fake vLLM-like server, the answer sent through the fake Bot API."""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from core.research import compat
from tests.fixtures.git_repos import VLLM_ASCEND_FILES, make_repo
from tests.support.fake_openai import FakeOpenAI, Reply, call, tool_messages
from tests.support.fake_telegram import FakeTelegram, message_update
from tests.support.stack import running_bot
from tests.e2e.test_telegram import final_messages, post, tg, tg_settings  # noqa: F401

REPO = "vllm-project/vllm-ascend"
PERMALINK = re.compile(r"https://github\.com/vllm-project/vllm-ascend/blob/[0-9a-f]{40}/vllm_ascend/platform\.py#L\d+")
INVENTED = "https://github.com/vllm-project/vllm-ascend/issues/777777"


@pytest.fixture(autouse=True)
def fresh_process() -> Iterator[None]:
    compat.forget_all()
    yield
    compat.forget_all()


def answer(body: dict[str, Any]) -> Reply:
    found = PERMALINK.search("\n".join(tool_messages(body)))
    return Reply(
        content=f"<think>private chain of thought</think>In vllm-ascend, 507015 surfaces at "
        f"{found.group(0) if found else '(nothing)'}; see [#777777]({INVENTED}).",
        piece_chars=4,
        piece_interval=0.05,  # about 2 s of streaming: long enough for a draft to show however the engine throttles
    )


async def test_a_telegram_dm_answered_by_an_openai_compatible_model(tg: FakeTelegram, tg_settings: Any, tmp_path) -> None:
    make_repo(tmp_path / "repos" / REPO, VLLM_ASCEND_FILES)
    script = [Reply(tool_calls=[call("search_code", repo=REPO, query="507015")]), answer]
    async with FakeOpenAI(script) as model:
        settings = tg_settings(
            model_provider="openai",
            openai_base_url=model.url,
            repos_dir=tmp_path / "repos",
            github_api_url="http://127.0.0.1:9",
            gitcode_api_url="http://127.0.0.1:9",
            deepwiki_mcp_url="http://127.0.0.1:9/mcp",
        )
        async with running_bot(settings) as stack:
            response = await post(stack, message_update("vllm-ascend ACL error 507015 on Atlas 800I A2"))
            assert response.status_code == 200
            await stack.wait_idle(40)
    final = final_messages(tg, 42)[-1]
    assert final.startswith("In vllm-ascend, 507015 surfaces at"), final
    assert PERMALINK.search(final) and INVENTED not in final
    everything = " ".join(str(c.params) for c in tg.calls)
    assert "chain of thought" not in everything and "<think>" not in everything  # not in drafts either
    assert model.calls == 2
    drafts = [c.params.get("text", "") for c in tg.calls_to("sendMessageDraft")]
    assert any("In vllm-ascend, 507015" in d for d in drafts), drafts  # the answer streamed into the DM draft
