"""ESCALATE_FILE_DIRECTLY: the escalation filed through the forge's API, against local fake APIs."""
from __future__ import annotations

import logging

from bot.wiring import escalator
from core.conversation import Conversation
from core.messages import InboundMessage
from core.session import RedisSessionStore
from tests.support.fake_issue_apis import FakeGitCode, FakeGitHub

TOKEN = "ghp_" + "Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2"
GITCODE_TOKEN = "gitcode-token-value-0123456789"


def message(text: str, thread: str) -> InboundMessage:
    return InboundMessage("telegram", "bot1", "42", thread, "7", text, "m", "e", True)


async def ask_and_escalate(settings, redis, keys, question: str, thread: str) -> str:  # noqa: ANN001
    conversation = Conversation(RedisSessionStore(redis, keys, 600), escalator=escalator(settings))
    await conversation.handle(message(question, thread))
    return (await conversation.handle(message("escalate", thread))).text


async def test_with_the_setting_and_a_token_the_issue_is_filed_on_github(make_settings, redis, keys):
    async with FakeGitHub({}) as github:
        settings = make_settings(escalate_file_directly=True, github_token=TOKEN, github_api_url=github.url)
        shown = await ask_and_escalate(settings, redis, keys, f"vllm-ascend 0.9.1 crash, my token is {TOKEN}, "
                                       "RuntimeError: ACL stream synchronize failed, error code:507015", "gh")
        posts = [r for r in github.requests if r.method == "POST"]
    assert [p.path for p in posts] == ["/repos/vllm-project/vllm-ascend/issues"]
    assert posts[0].headers["authorization"] == f"Bearer {TOKEN}"
    sent = posts[0].json
    assert "507015" in sent["title"] and sent["labels"] == ["bug"]
    assert TOKEN not in sent["body"] and TOKEN not in sent["title"] and "[redacted]" in sent["title"] + sent["body"]
    assert "https://github.com/vllm-project/vllm-ascend/issues/1" in shown and TOKEN not in shown
    assert github.issues["vllm-project/vllm-ascend"][0].state == "open"


async def test_gitcode_products_are_filed_on_gitcode(make_settings, redis, keys):
    async with FakeGitCode({}) as gitcode:
        settings = make_settings(escalate_file_directly=True, gitcode_token=GITCODE_TOKEN, gitcode_api_url=gitcode.api_url)
        shown = await ask_and_escalate(settings, redis, keys, "MindIE-LLM 启动报错 507015，怎么处理？", "gc")
        posts = [r for r in gitcode.requests if r.method == "POST"]
    assert [p.path for p in posts] == ["/api/v5/repos/Ascend/issues"] and posts[0].json["repo"] == "MindIE-LLM"
    assert "https://gitcode.com/Ascend/MindIE-LLM/issues/1" in shown


async def test_without_the_setting_nothing_is_filed_and_the_link_is_the_answer(make_settings, redis, keys):
    async with FakeGitHub({}) as github:
        settings = make_settings(github_token=TOKEN, github_api_url=github.url)  # ESCALATE_FILE_DIRECTLY unset
        shown = await ask_and_escalate(settings, redis, keys, "vllm-ascend 0.9.1 fails with error code:507015", "off")
        assert not [r for r in github.requests if r.method == "POST"]
    assert "https://github.com/vllm-project/vllm-ascend/issues/new?" in shown


async def test_a_rejected_token_falls_back_to_the_link_and_logs_no_secret(make_settings, redis, keys, caplog):
    async with FakeGitHub({}) as github:
        github.accepts_token = False
        settings = make_settings(escalate_file_directly=True, github_token=TOKEN, github_api_url=github.url)
        with caplog.at_level(logging.WARNING):
            shown = await ask_and_escalate(settings, redis, keys, "vllm-ascend 0.9.1 fails with error code:507015", "bad")
        assert len([r for r in github.requests if r.method == "POST"]) == 1
    assert "https://github.com/vllm-project/vllm-ascend/issues/new?" in shown
    assert "HTTP 401" in caplog.text and TOKEN not in caplog.text
