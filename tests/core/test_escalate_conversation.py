"""`escalate` / `提交问题` in a thread, through the conversation core on a real Redis session store."""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qs, urlsplit

import pytest

from core.conversation import Conversation
from core.escalate import ESCALATE_CHOICE, Escalation, Escalator
from core.messages import InboundMessage, ReplyKind
from core.research.redact import Redactor
from core.session import RedisSessionStore

SECRET = "hunter2-configured-SECRET-value"
_URL = re.compile(r"https://(?:github|gitcode)\.com/\S+")


def message(text: str, thread: str = "t1", choice: str | None = None) -> InboundMessage:
    return InboundMessage("slack", "T1", "C1", thread, "U1", text, "m", "e", False, choice=choice)


def link_in(text: str) -> str:
    found = _URL.search(text)
    assert found, text
    return found.group(0)


def query(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


class RecordingFiler:
    def __init__(self) -> None:
        self.filed: list[Escalation] = []

    async def file(self, escalation: Escalation) -> str | None:
        self.filed.append(escalation)
        return f"https://github.com/{escalation.api_repo}/issues/{9000 + len(self.filed)}"


@pytest.fixture
def store(redis, keys) -> RedisSessionStore:
    return RedisSessionStore(redis, keys, 600)


async def test_escalate_after_an_answer_gives_a_prefilled_github_link_and_the_thread_records_it(store):
    conversation = Conversation(store, escalator=Escalator(Redactor([SECRET])))
    answer = await conversation.handle(message(f"vllm-ascend 0.9.1 on 910B: vllm serve fails with --api-key {SECRET}, "
                                               "RuntimeError: ACL stream synchronize failed, error code:507015"))
    assert answer.kind is ReplyKind.ANSWER and answer.repos[0] == "vllm-project/vllm-ascend"
    reply = await conversation.handle(message("escalate"))
    assert reply.kind is ReplyKind.NOTICE and reply.language == "en"
    url = link_in(reply.text)
    assert url.startswith("https://github.com/vllm-project/vllm-ascend/issues/new?")
    fields = query(url)
    assert "507015" in fields["title"] and SECRET not in url and SECRET not in json.dumps(fields)
    assert "- vllm-ascend: 0.9.1" in fields["body"]
    assert all(s.url in fields["body"] for s in answer.sources if s.url.startswith("https://"))  # what was checked
    session = await store.load(message("x").conversation_key)
    assert [e["url"] for e in session.escalations] == [url] and session.escalations[0]["filed"] == ""


async def test_the_command_in_chinese_answers_in_chinese_and_mindie_goes_to_gitcode(store):
    conversation = Conversation(store)
    answer = await conversation.handle(message("MindIE-LLM 2.1.RC1 启动服务报错 507015，怎么处理？"))
    assert answer.kind is ReplyKind.ANSWER and answer.repos[0] == "verylucky01/MindIE-LLM"
    reply = await conversation.handle(message("提交问题"))
    assert reply.language == "zh" and "已预填" in reply.text
    url = link_in(reply.text)
    assert url.startswith("https://gitcode.com/Ascend/MindIE-LLM/issues/create?")
    assert "507015" in query(url)["body"] and "**标题:**" in reply.text  # and the text to paste


async def test_the_escalate_button_is_the_same_as_the_command(store):
    conversation = Conversation(store)
    await conversation.handle(message("How do I enable graph mode in vllm-ascend 0.9.1?"))
    reply = await conversation.handle(message("📮 Open an upstream issue", choice=ESCALATE_CHOICE))
    assert link_in(reply.text).startswith("https://github.com/vllm-project/vllm-ascend/issues/new?")


async def test_no_question_in_the_thread_is_one_clear_line(store):
    conversation = Conversation(store)
    for text, choice in (("escalate", None), ("提交问题", None), ("anything", ESCALATE_CHOICE)):
        reply = await conversation.handle(message(text, thread=f"empty-{text}", choice=choice))
        assert reply.kind is ReplyKind.NOTICE and "\n" not in reply.text
        assert "no question" in reply.text or "还没有问题" in reply.text
        assert not _URL.search(reply.text)


async def test_a_question_with_no_product_asks_to_name_it(store):
    conversation = Conversation(store)
    await conversation.handle(message("what is the weather like today?", thread="oos"))
    reply = await conversation.handle(message("escalate", thread="oos"))
    assert reply.kind is ReplyKind.NOTICE and "name the product" in reply.text and not _URL.search(reply.text)


async def test_an_odd_stored_thread_does_not_crash_the_command(redis, keys, store):
    key = message("x", thread="odd").conversation_key
    odd = {"version": 2, "turns": [{"role": "user", "text": "vllm-ascend crash", "at": 1.0}],
           "repos": ["../../etc/passwd", "vllm-project/vllm-ascend"], "env": {"cann": 5, "chip": ["x"], "vllm-ascend": "0.9.1"},
           "last_sources": [{"title": "x", "url": "javascript:alert(1)"}, "junk"], "escalations": {"not": "a list"}}
    await redis.set(keys.session(key), json.dumps(odd))
    reply = await Conversation(store).handle(message("escalate", thread="odd"))
    url = link_in(reply.text)
    assert url.startswith("https://github.com/vllm-project/vllm-ascend/issues/new?")
    body = query(url)["body"]
    assert "javascript:" not in body and "- vllm-ascend: 0.9.1" in body


async def test_direct_filing_files_once_per_question(store):
    filer = RecordingFiler()
    conversation = Conversation(store, escalator=Escalator(filer=filer))
    await conversation.handle(message("vllm-ascend 0.9.1 fails with error code:507015", thread="f"))
    first = await conversation.handle(message("escalate", thread="f"))
    again = await conversation.handle(message("escalate", thread="f"))  # a second click, or a retried job
    assert len(filer.filed) == 1
    assert "https://github.com/vllm-project/vllm-ascend/issues/9001" in first.text
    assert "https://github.com/vllm-project/vllm-ascend/issues/9001" in again.text
    session = await store.load(message("x", thread="f").conversation_key)
    assert session.escalations[-1]["filed"] == "yes"


async def test_help_names_the_command_in_both_languages(store):
    conversation = Conversation(store)
    assert "`escalate`" in (await conversation.handle(message("help", thread="h1"))).text
    assert "`提交问题`" in (await conversation.handle(message("帮助", thread="h2"))).text
