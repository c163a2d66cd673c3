"""Every answer of the conversation carries a confidence; a model's answer is as sure as what it cites."""
from __future__ import annotations

from core.conversation import Conversation
from core.messages import ReplyKind, Source
from core.session import RedisSessionStore
from core.triage import triage
from tests.core.test_conversation import Outcome, ScriptedResearcher, message

QUESTION = "vllm-ascend 507015 on 910B"  # an ACL error code the knowledge base knows: high offline
ASCEND = "vllm-project/vllm-ascend"


def code_source() -> Source:
    """A source the offline answer's error-code entry rests on (not the product's general docs link)."""
    offline = triage(QUESTION, (ASCEND,), "en")
    return next(s for s in offline.sources if "faqs.md" not in s.url and "/issues" not in s.url)


async def answer_with(redis, keys, outcome: Outcome):
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=ScriptedResearcher(outcome))
    reply = await conversation.handle(message(QUESTION))
    assert reply.kind is ReplyKind.ANSWER and reply.confidence is not None
    return reply.confidence


async def test_offline_answers_carry_their_level(redis, keys) -> None:
    conversation = Conversation(RedisSessionStore(redis, keys, 600))
    sure = (await conversation.handle(message(QUESTION))).confidence
    assert sure is not None and (sure.level, sure.reason) == ("high", "knowledge")
    assert (await conversation.handle(message("help"))).confidence is None  # a notice has no level


async def test_a_model_answer_citing_the_matched_entry_stays_high(redis, keys) -> None:
    sure = await answer_with(redis, keys, Outcome(True, "507015 means ...", (code_source(),)))
    assert (sure.level, sure.reason) == ("high", "knowledge")


async def test_a_model_answer_citing_something_else_is_medium_and_citing_nothing_low(redis, keys) -> None:
    other = Source("#123", "https://github.com/vllm-project/vllm-ascend/issues/123")
    assert (await answer_with(redis, keys, Outcome(True, "...", (other,)))).level == "medium"
    assert (await answer_with(redis, keys, Outcome(True, "...", ()))).level == "low"


async def test_when_the_model_is_unavailable_the_offline_evidence_decides(redis, keys) -> None:
    sure = await answer_with(redis, keys, Outcome(False, error="overloaded"))
    assert (sure.level, sure.reason) == ("high", "knowledge")
