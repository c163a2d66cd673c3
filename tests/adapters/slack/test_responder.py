"""The Slack responder against the fake Slack Web API, through the real slack_sdk client."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable

import pytest

from adapters.base import AdapterDeps
from adapters.slack.adapter import SlackAdapter
from adapters.slack.pacing import ChannelPacer
from adapters.slack.responder import SlackDeliveryError
from core.ingress import Ingress
from core.messages import InboundMessage, Progress, Reply, ReplyKind, Source
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack

CHANNEL = "C0CHAN01"
THREAD = "1700000001.000100"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


@pytest.fixture
def make_adapter(make_settings: Callable, redis, keys, slack: FakeSlack) -> Callable[..., SlackAdapter]:
    def build(**overrides: object) -> SlackAdapter:
        settings = make_settings(
            slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url,
            slack_post_interval_seconds=0, **overrides,
        )
        return SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 60)))

    return build


async def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


def question(thread: str = THREAD, channel: str = CHANNEL) -> InboundMessage:
    return InboundMessage("slack", TEAM, channel, thread, "U0USER01", "why does it fail?", thread, "Ev1",
                          channel.startswith("D"), reply_context={"recipient_team": TEAM})


def answer(text: str = "Use **vllm-ascend 0.9.1** with vllm 0.9.1.", trace: str = "trace1") -> Reply:
    return Reply(ReplyKind.ANSWER, text, "en", sources=(Source("matrix", "https://example.org/m"),), trace_id=trace)


async def test_progress_then_streamed_answer_with_feedback_and_cleared_status(make_adapter, slack: FakeSlack) -> None:
    responder = make_adapter().responder(question(), "job-1")
    await responder.progress(Progress("Reading your question…"))
    await responder.progress(Progress("Running the quick diagnostic…"))  # coalesced: a newer line follows
    await responder.progress(Progress("Researching **vllm-ascend**…"))
    assert slack.reactions[(CHANNEL, THREAD)] == {"eyes"}
    await eventually(lambda: len(slack.statuses) == 2)
    assert slack.status_texts() == ["Reading your question…", "Researching vllm-ascend…"]
    assert slack.statuses[0]["thread_ts"] == THREAD and slack.statuses[0]["channel_id"] == CHANNEL

    delivered = await responder.finish(answer())

    [streamed] = slack.in_thread(CHANNEL, THREAD)
    assert streamed.kind == "stream" and streamed.stopped
    assert streamed.text.startswith("Use **vllm-ascend 0.9.1** with vllm 0.9.1.")
    assert "- [matrix](https://example.org/m)" in streamed.text
    assert [b["value"] for b in streamed.buttons()] == ["trace1", "trace1"]
    start = slack.calls_to("chat.startStream")[0]
    assert (start["recipient_user_id"], start["recipient_team_id"], start["thread_ts"]) == ("U0USER01", TEAM, THREAD)
    assert delivered.message_ids == (streamed.ts,)
    assert slack.status_texts()[-1] == ""  # cleared explicitly
    assert slack.reactions[(CHANNEL, THREAD)] == set()
    assert slack.count("chat.postMessage") == 0


async def test_without_streaming_the_answer_is_posted_as_mrkdwn(make_adapter, slack: FakeSlack) -> None:
    responder = make_adapter(slack_streaming=False).responder(question(), "job-2")
    await responder.finish(answer())
    [posted] = slack.in_thread(CHANNEL, THREAD)
    assert posted.section_text().startswith("Use *vllm-ascend 0.9.1* with vllm 0.9.1.")
    assert "<https://example.org/m|matrix>" in posted.section_text()
    call = slack.calls_to("chat.postMessage")[0]
    assert call["unfurl_links"] is False and call["unfurl_media"] is False
    assert slack.count("chat.startStream") == 0


async def test_refused_status_falls_back_to_one_placeholder_updated_in_place(make_adapter, slack: FakeSlack) -> None:
    slack.fail("assistant.threads.setStatus", error="missing_scope", times=5)
    adapter = make_adapter()
    responder = adapter.responder(question(), "job-3")
    await responder.progress(Progress("Reading your question…"))
    await responder.progress(Progress("Running the quick diagnostic…"))
    [placeholder] = slack.in_thread(CHANNEL, THREAD)
    assert "Reading your question" in placeholder.section_text()
    # the second update is within the edit interval: throttled, not a new message
    assert slack.count("chat.postMessage") == 1

    delivered = await responder.finish(answer())
    [final] = slack.in_thread(CHANNEL, THREAD)
    assert final.ts == placeholder.ts and final.updates >= 1
    assert final.section_text().startswith("Use *vllm-ascend 0.9.1*")
    assert delivered.message_ids == (placeholder.ts,)
    assert slack.count("chat.startStream") == 0  # a visible placeholder is replaced, not streamed under


async def test_stream_refused_falls_back_to_posting_and_stays_off(make_adapter, slack: FakeSlack) -> None:
    slack.fail("chat.startStream", error="unknown_method")
    adapter = make_adapter()
    await adapter.responder(question(), "job-4").finish(answer())
    await adapter.responder(question("1700000002.000100"), "job-5").finish(answer(trace="t2"))
    assert slack.count("chat.startStream") == 1  # not tried again after "unknown_method"
    assert [m.kind for m in slack.messages] == ["post", "post"]
    assert slack.messages[1].buttons()[0]["value"] == "t2"


async def test_stream_broken_midway_is_finished_with_chat_update(make_adapter, slack: FakeSlack) -> None:
    slack.fail("chat.stopStream", error="internal_error")
    long_text = "\n".join(f"Line {i} of a careful answer." for i in range(120))
    delivered = await make_adapter().responder(question(), "job-6").finish(answer(long_text))
    [message] = slack.in_thread(CHANNEL, THREAD)
    assert message.updates == 1 and message.kind == "post"
    assert "Line 119 of a careful answer." in message.section_text()
    assert delivered.message_ids == (message.ts,)


async def test_nothing_delivered_raises_and_clears_progress(make_adapter, slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", error="channel_not_found", times=5)
    responder = make_adapter(slack_streaming=False).responder(question(), "job-7")
    await responder.progress(Progress("Reading your question…"))
    with pytest.raises(SlackDeliveryError):
        await responder.finish(answer())
    assert slack.status_texts()[-1] == ""
    assert slack.reactions[(CHANNEL, THREAD)] == set()


async def test_error_reply_is_a_short_message_in_the_thread(make_adapter, slack: FakeSlack) -> None:
    responder = make_adapter().responder(question(), "job-8")
    await responder.progress(Progress("Reading your question…"))
    await responder.finish(Reply(ReplyKind.ERROR, "Sorry, something went wrong. Please try again.", "en"))
    [posted] = slack.in_thread(CHANNEL, THREAD)
    assert posted.section_text() == "Sorry, something went wrong. Please try again."
    assert posted.buttons() == []
    assert slack.status_texts()[-1] == ""


async def test_a_rerun_of_the_job_does_not_post_twice(make_adapter, slack: FakeSlack) -> None:
    adapter = make_adapter(slack_streaming=False)
    body = "\n\n".join(f"Paragraph {i}. " + "word " * 500 for i in range(12))  # several messages
    slack.fail("chat.postMessage", error="internal_error", times=0)
    first = await adapter.responder(question(), "job-9").finish(answer(body))
    posted = slack.count("chat.postMessage")
    assert posted == len(first.message_ids) > 1
    again = await adapter.responder(question(), "job-9").finish(answer(body))
    assert again.message_ids == first.message_ids
    assert slack.count("chat.postMessage") == posted


async def test_partial_delivery_keeps_what_arrived(make_adapter, slack: FakeSlack) -> None:
    adapter = make_adapter(slack_streaming=False)
    body = "\n\n".join(f"Paragraph {i}. " + "word " * 500 for i in range(12))
    original = slack._m_chat_postMessage
    calls = {"n": 0}

    def second_fails(params):
        calls["n"] += 1
        if calls["n"] == 2:
            return {"ok": False, "error": "msg_too_long"}
        return original(params)

    slack._m_chat_postMessage = second_fails  # type: ignore[method-assign]
    delivered = await adapter.responder(question(), "job-10").finish(answer(body))
    texts = [m.section_text() for m in slack.in_thread(CHANNEL, THREAD)]
    assert len(delivered.message_ids) == 1
    assert texts[0].startswith("Paragraph 0.")
    assert "could not be delivered" in texts[-1]


async def test_slack_429_is_retried_after_retry_after(make_adapter, slack: FakeSlack) -> None:
    slack.fail("chat.postMessage", status=429, error="ratelimited", retry_after=1)
    delivered = await make_adapter(slack_streaming=False).responder(question(), "job-11").finish(answer())
    assert slack.count("chat.postMessage") == 2
    assert len(delivered.message_ids) == 1 and slack.in_thread(CHANNEL, THREAD)


async def test_pacer_spaces_posts_per_channel_through_redis(redis, keys) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    pacer = ChannelPacer(redis, keys, interval_seconds=10.0, sleep=record)
    await pacer.wait("C1")
    await pacer.wait("C1")
    await pacer.wait("C1")
    await pacer.wait("C2")  # another channel has its own slots
    assert len(waits) == 2
    assert 5.0 < waits[0] <= 10.0 and 15.0 < waits[1] <= 20.0
