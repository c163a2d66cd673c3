"""`details` / `详细`: the full checklist and what-to-send list for the thread's last question."""
from __future__ import annotations

import pytest

from core.conversation import Conversation
from core.messages import InboundMessage, ReplyKind
from core.session import RedisSessionStore


def message(text: str, thread: str = "d1") -> InboundMessage:
    return InboundMessage("terminal", "w", "c", thread, "u", text, text, text, True)


@pytest.fixture
def conversation(redis, keys) -> Conversation:
    return Conversation(RedisSessionStore(redis, keys, 600))


async def test_details_expand_the_last_question_of_the_thread(conversation: Conversation) -> None:
    first = await conversation.handle(message("vllm-ascend 0.9.1 with vllm 0.11.0 crashes, error code:507015"))
    assert first.kind is ReplyKind.ANSWER and "### What to send" not in first.text and "`details`" in first.text
    more = await conversation.handle(message("details"))
    assert more.kind is ReplyKind.ANSWER
    assert "### Quick diagnostic checklist" in more.text and "### What to send" in more.text
    assert "python collect_env.py" in more.text and more.repos == ("vllm-project/vllm-ascend",)
    assert more.sources


async def test_details_in_chinese_for_a_mindie_question(conversation: Conversation) -> None:
    await conversation.handle(message("MindIE-LLM 服务启动报错 error code is 507015", thread="d2"))
    more = await conversation.handle(message("详细", thread="d2"))
    assert "### 请提供以下信息" in more.text and "完整的错误日志" in more.text
    assert "collect_env" not in more.text and "vllm serve" not in more.text


async def test_details_without_a_question_is_explained(conversation: Conversation) -> None:
    reply = await conversation.handle(message("details", thread="d3"))
    assert reply.kind is ReplyKind.NOTICE and "no earlier question" in reply.text
