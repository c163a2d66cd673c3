"""Streamed drafts in Slack: chat streaming while the draft grows, and the verified answer
replacing the streamed message in place (never a second message)."""
from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import pytest

from adapters.base import AdapterDeps
from adapters.slack.adapter import SlackAdapter
from core.ingress import Ingress
from core.messages import DRAFT_STAGE, InboundMessage, Progress, Reply, ReplyKind
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack

CHANNEL = "C0CHAN01"
THREAD = "1700000001.000100"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
def make_adapter(make_settings: Callable[..., Any], redis: Any, keys: Any, slack: FakeSlack) -> Callable[..., SlackAdapter]:
    def build(**overrides: object) -> SlackAdapter:
        settings = make_settings(
            slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url,
            slack_post_interval_seconds=0, **overrides,
        )
        adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 60)))
        adapter.capabilities = replace(adapter.capabilities, min_edit_interval=0.0)  # every draft shows
        return adapter

    return build


def question() -> InboundMessage:
    return InboundMessage("slack", TEAM, CHANNEL, THREAD, "U0USER01", "why?", THREAD, "Ev1", False,
                          reply_context={"recipient_team": TEAM})


def draft(text: str) -> Progress:
    return Progress(text, stage=DRAFT_STAGE)


FINAL = Reply(ReplyKind.ANSWER, "Set `max_model_len` to 4096 (verified).", "en", trace_id="tr1")


async def test_a_growing_draft_is_streamed_and_the_answer_replaces_it(make_adapter: Any, slack: FakeSlack) -> None:
    responder = make_adapter().responder(question(), "d-1")
    await responder.progress(Progress("Researching…"))
    await responder.progress(draft("Set `max_model_len`"))
    await responder.progress(draft("Set `max_model_len` to 4096"))
    [streamed] = slack.in_thread(CHANNEL, THREAD)
    assert streamed.kind == "stream" and streamed.text == "Set `max_model_len` to 4096"
    assert slack.count("chat.appendStream") >= 1  # the second draft only appended its new words

    delivered = await responder.finish(FINAL)
    [final] = slack.in_thread(CHANNEL, THREAD)
    assert final.ts == streamed.ts and delivered.message_ids == (streamed.ts,)
    assert "(verified)" in final.section_text() and [b["value"] for b in final.buttons()] == ["tr1", "tr1"]
    assert slack.count("chat.stopStream") == 1 and slack.count("chat.postMessage") == 0


async def test_a_rewritten_draft_edits_the_streamed_message(make_adapter: Any, slack: FakeSlack) -> None:
    responder = make_adapter().responder(question(), "d-2")
    await responder.progress(draft("First attempt"))
    await responder.progress(draft("Second, different attempt"))  # a stream cannot take text back
    [message] = slack.in_thread(CHANNEL, THREAD)
    assert message.stopped and "Second, different attempt" in message.section_text()
    await responder.finish(FINAL)
    assert [m.ts for m in slack.in_thread(CHANNEL, THREAD)] == [message.ts]


async def test_without_streaming_the_draft_lives_in_the_placeholder(make_adapter: Any, slack: FakeSlack) -> None:
    responder = make_adapter(slack_streaming=False).responder(question(), "d-3")
    await responder.progress(Progress("Researching…"))
    await responder.progress(draft("Set **it**"))
    [placeholder] = slack.in_thread(CHANNEL, THREAD)
    assert placeholder.section_text() == "Set *it*"
    await responder.finish(FINAL)
    [final] = slack.in_thread(CHANNEL, THREAD)
    assert final.ts == placeholder.ts and "(verified)" in final.section_text()
    assert slack.status_texts()[-1] == ""  # the status shown before the draft is cleared too
