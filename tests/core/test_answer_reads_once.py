"""One answered message: one session load, one read of the pasted environment, one signal extraction.

The session is loaded by `handle` and passed on to the answer; the environment the message states
is read once and shared by the release pins and triage (issue 25 item 6). Counted on a real Redis
session store with a ~30 KB pasted log, on the plain, clarified and expired-clarification paths.
"""
import sys
from collections import Counter
from pathlib import Path

import pytest

import core.environment
import core.signals
from core.conversation import Conversation, ConversationLimits
from core.messages import InboundMessage, ReplyKind
from core.releases.reading import ReleaseReading
from core.session import RedisSessionStore, Session

PASTE_HEAD = "vllm-ascend 0.9.1 with vllm 0.9.1 on 910B, CANN 8.1.RC1: serving Qwen fails at startup, what should I check?\n"
PASTE_LINE = "INFO 12-01 10:00:{s:02d} worker.py:123] loading weights shard {n} of 64 from /models/qwen ... done in 0.8s\n"
PASTE_TAIL = "RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB (EL0004)\n"


def pasted_log() -> str:
    lines = [PASTE_LINE.format(s=n % 60, n=n) for n in range(300)]
    return PASTE_HEAD + "".join(lines) + PASTE_TAIL


class CountingStore(RedisSessionStore):
    loads = 0

    async def load(self, conversation_key: str) -> Session:
        self.loads += 1
        return await super().load(conversation_key)


class Clock:
    now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def message(text: str, thread: str, choice: str | None = None) -> InboundMessage:
    return InboundMessage("terminal", "w", "c", thread, "u", text, text[:8], text[:8], True, choice=choice)


@pytest.fixture
def calls(monkeypatch) -> Counter:
    """Counts every call of read_environment and extract_signals, whichever module imported them."""
    counted: Counter = Counter()
    for original in (core.environment.read_environment, core.signals.extract_signals):
        def counting(*args, _original=original, **kwargs):
            counted[_original.__name__] += 1
            return _original(*args, **kwargs)

        for module in list(sys.modules.values()):
            if module is not None and module.__name__.startswith(("core.", "bot.")) and getattr(module, original.__name__, None) is original:
                monkeypatch.setattr(module, original.__name__, counting)
    return counted


@pytest.fixture
def store(redis, keys) -> CountingStore:
    return CountingStore(redis, keys, 600)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def conversation(store, clock, tmp_path: Path) -> Conversation:
    # With release reading on, so the pins' use of the environment is counted too.
    return Conversation(store, limits=ConversationLimits(clarification_ttl_seconds=60), clock=clock,
                        releases=ReleaseReading(tmp_path / "no-clones"))


async def test_a_pasted_log_is_answered_with_one_session_load_and_one_read_of_each(conversation, store, calls):
    paste = pasted_log()
    assert len(paste) > 30_000
    reply = await conversation.handle(message(paste, "t1"))
    assert reply.kind is ReplyKind.ANSWER and reply.repos == ("vllm-project/vllm-ascend",)
    assert "0.9.1" in reply.text  # the environment was read and shown
    assert store.loads == 1
    assert calls["read_environment"] == 1
    assert calls["extract_signals"] == 1


async def test_the_answer_uses_the_session_handle_loaded(conversation, store, calls):
    await conversation.handle(message(pasted_log(), "t2"))
    store.loads, calls["read_environment"] = 0, 0
    follow = await conversation.handle(message("and should I add --enforce-eager?", "t2"))
    assert follow.kind is ReplyKind.ANSWER and follow.repos == ("vllm-project/vllm-ascend",)  # the thread's repos
    assert "0.9.1" in follow.text  # the thread's environment, from the one load
    assert store.loads == 1 and calls["read_environment"] == 1


async def test_a_clarification_pick_is_answered_with_one_session_load(conversation, store, calls):
    asked = await conversation.handle(message("MindIE 报错 507015，怎么排查？", "t3"))
    assert asked.kind is ReplyKind.CLARIFY
    store.loads, calls["read_environment"] = 0, 0
    pick = next(i for i, o in enumerate(asked.options, 1) if o.repo == "verylucky01/MindIE-LLM")
    answered = await conversation.handle(message(str(pick), "t3"))
    assert answered.kind is ReplyKind.ANSWER and "507015" in answered.text
    assert store.loads == 1 and calls["read_environment"] == 1


async def test_an_answer_after_an_expired_clarification_sees_the_updated_session(conversation, store, clock, calls):
    assert (await conversation.handle(message("MindIE 报错了，说找不到符号，怎么排查？", "t4"))).kind is ReplyKind.CLARIFY
    clock.now += 61
    store.loads, calls["read_environment"] = 0, 0
    reply = await conversation.handle(message("How do I serve a W8A8 model with vllm-ascend 0.9.1?", "t4"))
    assert reply.kind is ReplyKind.ANSWER and reply.repos == ("vllm-project/vllm-ascend",)
    assert store.loads == 1 and calls["read_environment"] == 1
    assert not (await store.load(message("x", "t4").conversation_key)).expired_pending  # the answer's update kept
