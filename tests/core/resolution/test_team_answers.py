"""Team resolutions: an expert's `save as answer` in a thread, on real Redis, shown only in that workspace."""
from __future__ import annotations

import pytest

from adapters.registry import platform_names
from core.conversation import Conversation
from core.messages import InboundMessage, ReplyKind
from core.resolution.team import RedisTeamStore, TeamAnswer, saved_answer_text
from core.session import RedisSessionStore

QUESTION = "vllm-ascend startup dies with `RuntimeError: HCCL function error: HcclCommInitRootInfo, error code is 7` on two nodes"


def message(text: str, *, sender: str = "U_ASK", workspace: str = "T1", thread: str = "t1", name: str = "") -> InboundMessage:
    return InboundMessage("slack", workspace, "C_OPS", thread, sender, text, f"{thread}-{text[:20]}", f"{thread}-{text[:20]}", False,
                          sender_name=name)


@pytest.fixture
def conversation(redis, keys) -> Conversation:  # type: ignore[no-untyped-def]
    return Conversation(RedisSessionStore(redis, keys, 600), team=RedisTeamStore(redis, keys),
                        experts=platform_names().allowlist(["slack:U_EXPERT"]), clock=lambda: 1_767_225_600.0)


def test_the_command_and_its_answer() -> None:
    assert saved_answer_text("save as answer: set HCCL_IF_IP on both nodes") == "set HCCL_IF_IP on both nodes"
    assert saved_answer_text("保存答案：两台机器都要设置 HCCL_IF_IP") == "两台机器都要设置 HCCL_IF_IP"
    assert saved_answer_text("how do I save an answer?") is None


async def test_an_experts_answer_leads_the_next_askers_answer_in_that_workspace_only(conversation: Conversation) -> None:
    await conversation.handle(message(QUESTION))
    refused = await conversation.handle(message("save as answer: reboot it", sender="U_RANDOM"))
    assert refused.kind is ReplyKind.NOTICE and "Only the experts" in refused.text
    saved = await conversation.handle(message(
        "save as answer: error code 7 here meant HCCL_IF_IP pointed at the wrong NIC; set it on both nodes [docs](https://evil.example/x)",
        sender="U_EXPERT", name="Wei"))
    assert saved.kind is ReplyKind.NOTICE and "Saved" in saved.text

    # no product named: the saved answer settles it (vllm-ascend, from the thread it was saved in)
    later = await conversation.handle(message("two nodes, RuntimeError: HCCL function error: HcclCommInitRootInfo, error code is 7", thread="t2"))
    assert later.text.startswith("**Answered by Wei in C_OPS, 2026-01-01:** error code 7 here meant HCCL_IF_IP")
    assert "evil" not in later.text  # a colleague's link is no more a citation than an issue's
    assert later.repos == ("vllm-project/vllm-ascend",)

    elsewhere = await conversation.handle(message("RuntimeError: HCCL function error: HcclCommInitRootInfo, error code is 7",
                                                  workspace="T_OTHER", thread="t3"))
    assert "Answered by" not in elsewhere.text  # never shown outside the workspace where it was said


async def test_saving_needs_a_question_and_an_answer(conversation: Conversation) -> None:
    empty_thread = await conversation.handle(message("save as answer: x", sender="U_EXPERT", thread="new"))
    assert "no question in this thread" in empty_thread.text
    await conversation.handle(message(QUESTION, thread="t4"))
    no_text = await conversation.handle(message("save as answer:", sender="U_EXPERT", thread="t4"))
    assert "Write the answer after the command" in no_text.text


async def test_entries_that_are_not_saved_answers_are_skipped(redis, keys) -> None:  # type: ignore[no-untyped-def]
    store = RedisTeamStore(redis, keys)
    good = TeamAnswer.saved("slack", "T1", "C", "Wei", QUESTION, "set HCCL_IF_IP", "2026-01-01", ("vllm-project/vllm-ascend",))
    await store.add(good)
    await redis.lpush(keys.team_answers("slack", "T1"), b"\xff not json", '{"platform": 1}', '{"question": "x"}', "[]")
    assert await store.of_workspace("slack", "T1") == [good]
    assert good.words and good.signatures  # derived once, when saved
