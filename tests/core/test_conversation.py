"""The conversation core end to end on a real Redis session store (no platform, no model)."""
import asyncio
from dataclasses import dataclass, field

import pytest

from core.conversation import Conversation, ConversationLimits
from core.messages import InboundMessage, Progress, ReplyKind, Source
from core.session import RedisSessionStore


def message(text: str, thread: str = "t1", choice: str | None = None, event: str = "e") -> InboundMessage:
    return InboundMessage("terminal", "w", "c", thread, "u", text, event, event, True, choice=choice)


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def conversation(redis, keys, clock) -> Conversation:
    return Conversation(RedisSessionStore(redis, keys, 600), limits=ConversationLimits(clarification_ttl_seconds=60), clock=clock)


async def test_bare_mindie_asks_which_component_then_resumes_the_question(conversation):
    asked = await conversation.handle(message("MindIE 报错 507015，怎么排查？"))
    assert asked.kind is ReplyKind.CLARIFY
    assert asked.language == "zh"
    assert {o.repo for o in asked.options} >= {"verylucky01/MindIE-LLM", "verylucky01/MindIE-Motor"}
    pick = next(i for i, o in enumerate(asked.options, 1) if o.repo == "verylucky01/MindIE-LLM")
    answered = await conversation.handle(message(str(pick)))
    assert answered.kind is ReplyKind.ANSWER
    assert answered.repos == ("verylucky01/MindIE-LLM",)
    assert answered.language == "zh"
    assert "507015" in answered.text  # the original question resumed, not "2"


async def test_a_button_choice_resumes_the_question(conversation):
    asked = await conversation.handle(message("torch_npu 报错 EZ9999 之后进程退出"))
    assert asked.kind is ReplyKind.CLARIFY
    key = next(o.key for o in asked.options if o.repo == "vllm-project/vllm-ascend")
    answered = await conversation.handle(message("vllm-ascend", choice=key))
    assert answered.kind is ReplyKind.ANSWER and answered.repos == ("vllm-project/vllm-ascend",)


async def test_follow_up_in_the_thread_keeps_the_repository(conversation):
    first = await conversation.handle(message("vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup"))
    assert first.repos == ("vllm-project/vllm-ascend",)
    follow = await conversation.handle(message("and what about graph mode, should I add --enforce-eager?"))
    assert follow.kind is ReplyKind.ANSWER
    assert follow.repos == ("vllm-project/vllm-ascend",)


async def test_an_unrelated_question_replaces_a_pending_clarification(conversation):
    assert (await conversation.handle(message("MindIE 报错了，说找不到符号，怎么排查？"))).kind is ReplyKind.CLARIFY
    other = await conversation.handle(message("How do I serve a W8A8 model with vllm-ascend?"))
    assert other.kind is ReplyKind.ANSWER and other.repos == ("vllm-project/vllm-ascend",)
    late_pick = await conversation.handle(message("1"))
    assert late_pick.kind is not ReplyKind.ANSWER or late_pick.repos != ("verylucky01/MindIE-LLM",)


async def test_a_reply_to_an_expired_clarification_gets_a_clear_notice(conversation, clock):
    assert (await conversation.handle(message("MindIE 报错了，说找不到符号，怎么排查？"))).kind is ReplyKind.CLARIFY
    clock.now += 61
    late = await conversation.handle(message("1"))
    assert late.kind is ReplyKind.NOTICE
    assert "过期" in late.text


async def test_a_stale_button_without_a_pending_question_is_explained(conversation):
    reply = await conversation.handle(message("MindIE-LLM", choice="mindie-llm"))
    assert reply.kind is ReplyKind.NOTICE and "expired" in reply.text


async def test_out_of_scope_is_polite_and_in_the_users_language(conversation):
    en = await conversation.handle(message("What's a good recipe for sourdough bread?", thread="a"))
    zh = await conversation.handle(message("今天北京天气怎么样？", thread="b"))
    assert en.kind is ReplyKind.OUT_OF_SCOPE and en.language == "en" and "vllm-ascend" in en.text
    assert zh.kind is ReplyKind.OUT_OF_SCOPE and zh.language == "zh" and "范围" in zh.text


async def test_help_and_reset_commands(conversation):
    await conversation.handle(message("vllm-ascend install on 910B"))
    assert (await conversation.handle(message("帮助"))).kind is ReplyKind.NOTICE
    reset = await conversation.handle(message("reset"))
    assert reset.kind is ReplyKind.NOTICE
    # memory is gone: a follow-up naming no project is no longer routed to vllm-ascend by memory
    follow = await conversation.handle(message("and what about graph mode?"))
    assert follow.repos != ("vllm-project/vllm-ascend",)


@pytest.mark.parametrize(
    "text",
    ["", "   ", "\x00\x01\x02", "🚀🔥😀", "x" * 200_000 + " vllm-ascend 507015", "bad \udcff bytes vllm-ascend"],
)
async def test_bad_input_gets_a_clear_reply(conversation, text):
    reply = await conversation.handle(message(text))
    assert reply.kind in (ReplyKind.NOTICE, ReplyKind.OUT_OF_SCOPE, ReplyKind.ANSWER, ReplyKind.CLARIFY)
    assert reply.text.strip()


async def test_concurrent_messages_in_one_thread_keep_every_turn(conversation, redis, keys):
    questions = [f"vllm-ascend question {i} about 910B graph mode" for i in range(5)]
    await asyncio.gather(*(conversation.handle(message(q, event=str(i))) for i, q in enumerate(questions)))
    session = await RedisSessionStore(redis, keys, 600).load("terminal:w:c:t1")
    user_turns = [t.text for t in session.turns if t.role == "user"]
    assert sorted(user_turns) == sorted(questions)


@dataclass
class Usage:
    input: int = 100
    output: int = 50
    cache_write: int = 0
    cache_read: int = 0


@dataclass
class Outcome:
    ok: bool
    text: str = ""
    sources: tuple = ()
    trace: tuple = ()
    usage: Usage = field(default_factory=Usage)
    error: str = ""


class ScriptedResearcher:
    def __init__(self, outcome: Outcome) -> None:
        self.outcome = outcome
        self.requests: list = []

    async def answer(self, request, progress) -> Outcome:
        self.requests.append(request)
        await progress(Progress("Searching vllm-project/vllm-ascend issues for 507015", stage="tool"))
        return self.outcome


async def test_research_answer_trace_and_history(redis, keys):
    trace = ({"tool": "search_issues", "arguments": {"repo": "vllm-project/vllm-ascend", "query": "507015"}, "duration_ms": 12, "ok": True},)
    researcher = ScriptedResearcher(Outcome(True, "In vllm-ascend, 507015 means ...", (Source("#123", "https://github.com/vllm-project/vllm-ascend/issues/123"),), trace))
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher)
    seen: list[str] = []

    async def progress(p: Progress) -> None:
        seen.append(p.text)

    reply = await conversation.handle(message("vllm-ascend 507015 on 910B with vllm 0.11.0"), progress)
    assert reply.kind is ReplyKind.ANSWER and reply.sources[0].url.endswith("/123")
    assert any("507015" in s for s in seen)
    request = researcher.requests[0]
    assert request.repos == ("vllm-project/vllm-ascend",) and request.triage_markdown
    shown = await conversation.handle(message("how did you find this?"))
    assert "search_issues" in shown.text and "507015" in shown.text
    await conversation.handle(message("and on 310P?"))
    assert researcher.requests[1].history[0] == ("user", "vllm-ascend 507015 on 910B with vllm 0.11.0")


async def test_model_unavailable_falls_back_to_triage_with_a_note(redis, keys):
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=ScriptedResearcher(Outcome(False, error="overloaded")))
    reply = await conversation.handle(message("vllm-ascend 507015 on 910B"))
    assert reply.kind is ReplyKind.ANSWER
    assert "unavailable" in reply.text and "507015" in reply.text


async def test_a_comparison_is_answered_about_both_without_a_question(conversation):
    answered = await conversation.handle(message("MindIE 和 vllm-ascend 在 910B 上哪个吞吐更高？"))
    assert answered.kind is ReplyKind.ANSWER
    assert set(answered.repos) == {"vllm-project/vllm-ascend", "verylucky01/MindIE-LLM"}


async def test_only_one_clarification_round_per_question(conversation):
    asked = await conversation.handle(message("MindIE 报错了怎么办？"))
    assert asked.kind is ReplyKind.CLARIFY
    again = await conversation.handle(message("就是 MindIE 那个"))  # still ambiguous
    assert again.kind is ReplyKind.ANSWER
    assert again.repos and again.repos[0] == asked.options[0].repo


async def test_a_clarification_answers_what_holds_for_every_product_first(conversation):
    asked = await conversation.handle(message("ASCEND_RT_VISIBLE_DEVICES 怎么设置多卡？", thread="shared-var"))
    assert asked.kind is ReplyKind.CLARIFY
    head, _, menu = asked.text.partition("这个问题涉及哪个项目")
    assert "ASCEND_RT_VISIBLE_DEVICES" in head and "NPU" in head  # the CANN fact, before the question
    assert menu and asked.sources  # ... and the menu still follows, with the fact's source
    plain = await conversation.handle(message("MindIE 报错了，说找不到符号，怎么排查？", thread="bare-mindie"))
    assert plain.kind is ReplyKind.CLARIFY and plain.sources == ()
    assert "知识库" not in plain.text  # nothing product-neutral was named: just the question


@pytest.mark.parametrize(
    ("question", "language"),
    [("vllm-ascend 报错 ACL error 507015 怎么办", "zh"), ("vllm-ascend fails with ACL error 507015, what now?", "en")],
)
async def test_the_language_travels_with_the_message_and_every_progress_update(conversation, question, language):
    # Platforms read it from the values instead of detecting it again from the text.
    updates: list[Progress] = []

    async def progress(update: Progress) -> None:
        updates.append(update)

    inbound = message(question)
    assert inbound.language == language
    assert InboundMessage.from_json(inbound.to_json()).language == language  # not lost in the queue
    reply = await conversation.handle(inbound, progress)
    assert reply.language == language
    assert updates and {u.language for u in updates} == {language}
