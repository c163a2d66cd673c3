"""POST /slack/events over HTTP with real signatures, the real Ingress on Redis and Bolt in between.

No worker here: these tests check what is (and is not) enqueued, and how the endpoint answers.
"""
from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from starlette.applications import Starlette

from adapters.base import AdapterDeps
from adapters.slack.adapter import SlackAdapter
from core.ingress import Ingress
from core.messages import InboundMessage
from tests.support.fake_http import UvicornRunner, free_port
from tests.support.fake_slack import (
    BOT_ID,
    BOT_TOKEN,
    BOT_USER,
    SIGNING_SECRET,
    TEAM,
    FakeSlack,
    block_action,
    event_callback,
    mention,
    message,
    post_action,
    post_event,
    sign,
)

CHANNEL = "C0CHAN01"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


async def serve(adapter: SlackAdapter) -> UvicornRunner:
    runner = UvicornRunner(Starlette(routes=adapter.routes()))
    await runner.start()
    return runner


@pytest.fixture
async def bot(make_settings: Callable, redis, keys, slack: FakeSlack) -> AsyncIterator[tuple[str, SlackAdapter]]:
    settings = make_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
    adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
    runner = await serve(adapter)
    try:
        yield runner.url, adapter
    finally:
        await runner.stop()
        await adapter.stop()


async def jobs(redis, keys) -> list[InboundMessage]:
    return [InboundMessage.from_json(f[b"message"]) for _, f in await redis.xrange(keys.jobs)]


async def test_url_verification_is_answered(bot) -> None:
    url, _ = bot
    response = await post_event(url, {"type": "url_verification", "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", "token": "x"})
    assert response.status_code == 200
    assert response.json()["challenge"] == "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"


async def test_mention_is_enqueued_and_acked(bot, redis, keys, slack: FakeSlack) -> None:
    url, _ = bot
    response = await post_event(url, event_callback(mention("why OOM on 910B?", ts="1700000001.000100"), event_id="EvA"))
    assert response.status_code == 200
    [job] = await jobs(redis, keys)
    assert (job.text, job.thread, job.channel, job.workspace) == ("why OOM on 910B?", "1700000001.000100", CHANNEL, TEAM)
    assert slack.count("auth.test") == 1  # Bolt learns the bot's own ids once


async def test_bad_signature_and_stale_timestamp_are_401_and_nothing_is_enqueued(bot, redis, keys) -> None:
    url, _ = bot
    payload = event_callback(mention("q", ts="1700000001.000100"))
    wrong = await post_event(url, payload, secret="not-the-secret")
    stale = await post_event(url, payload, timestamp=int(time.time()) - 6 * 60)
    future = await post_event(url, payload, timestamp=int(time.time()) + 6 * 60)
    body = json.dumps(payload).encode()
    async with httpx.AsyncClient() as client:
        unsigned = await client.post(url + "/slack/events", content=body, headers={"content-type": "application/json"})
        tampered = await client.post(
            url + "/slack/events", content=body.replace(b"C0CHAN01", b"C0CHAN02"),
            headers={"content-type": "application/json", **sign(body)},
        )
    assert [r.status_code for r in (wrong, stale, future, unsigned, tampered)] == [401] * 5
    assert not await redis.exists(keys.jobs)


async def test_retries_of_one_event_are_one_job(bot, redis, keys) -> None:
    url, _ = bot
    payload = event_callback(mention("q", ts="1700000001.000100"), event_id="EvRetry")
    assert (await post_event(url, payload)).status_code == 200
    assert (await post_event(url, payload, retry_num=1)).status_code == 200
    assert (await post_event(url, payload, retry_num=2)).status_code == 200
    assert len(await jobs(redis, keys)) == 1


async def test_mention_in_an_engaged_thread_fires_twice_but_is_one_job(bot, redis, keys) -> None:
    url, _ = bot
    await post_event(url, event_callback(mention("first", ts="1700000001.000100")))
    follow = "1700000005.000100"
    # Slack sends both app_mention and message.channels for the same message, with different event ids
    await post_event(url, event_callback(message(f"<@{BOT_USER}> again", ts=follow, thread_ts="1700000001.000100")))
    await post_event(url, event_callback(mention("again", ts=follow, thread_ts="1700000001.000100")))
    texts = [j.text for j in await jobs(redis, keys)]
    assert texts == ["first", "again"]


async def test_thread_follow_up_needs_no_mention_but_strangers_threads_are_ignored(bot, redis, keys) -> None:
    url, _ = bot
    await post_event(url, event_callback(mention("first", ts="1700000001.000100")))
    await post_event(url, event_callback(message("follow-up", ts="1700000002.000100", thread_ts="1700000001.000100")))
    await post_event(url, event_callback(message("not ours", ts="1700000003.000100", thread_ts="1699999999.000100")))
    await post_event(url, event_callback(message("top-level chatter", ts="1700000004.000100")))
    assert [j.text for j in await jobs(redis, keys)] == ["first", "follow-up"]


async def test_require_mention_in_threads(make_settings, redis, keys, slack: FakeSlack) -> None:
    settings = make_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url,
                             slack_require_mention_in_threads=True)
    adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
    runner = await serve(adapter)
    try:
        await post_event(runner.url, event_callback(mention("first", ts="1700000001.000100")))
        await post_event(runner.url, event_callback(message("follow-up", ts="1700000002.000100", thread_ts="1700000001.000100")))
        assert [j.text for j in await jobs(redis, keys)] == ["first"]
    finally:
        await runner.stop()


async def test_own_messages_other_bots_and_edits_are_acked_and_ignored(bot, redis, keys) -> None:
    url, _ = bot
    await post_event(url, event_callback(mention("first", ts="1700000001.000100")))
    thread = "1700000001.000100"
    ignored = [
        message("my own answer", ts="1700000002.000100", thread_ts=thread, user=BOT_USER, bot_id=BOT_ID),
        message("another bot", ts="1700000003.000100", thread_ts=thread, user="U0OTHERB", bot_id="B0OTHER1"),
        {**message("edited", ts="1700000004.000100", thread_ts=thread), "subtype": "message_changed"},
        message("joined", ts="1700000005.000100", thread_ts=thread, subtype="channel_join"),
    ]
    for event in ignored:
        assert (await post_event(url, event_callback(event))).status_code == 200
    assert [j.text for j in await jobs(redis, keys)] == ["first"]


async def test_dm_is_enqueued_as_direct(bot, redis, keys) -> None:
    url, _ = bot
    await post_event(url, event_callback(message("hello there", ts="1700000001.000100", channel="D0DM0001", channel_type="im")))
    [job] = await jobs(redis, keys)
    assert job.is_direct and job.channel == "D0DM0001" and job.text == "hello there"


async def test_bad_input_is_a_clean_4xx(bot, redis, keys) -> None:
    url, _ = bot
    async with httpx.AsyncClient() as client:
        not_json = b"{this is not json"
        r1 = await client.post(url + "/slack/events", content=not_json, headers={"content-type": "application/json", **sign(not_json)})
        not_utf8 = b'{"type": "event_callback", "x": "\xff\xfe"}'
        r2 = await client.post(url + "/slack/events", content=not_utf8, headers={"content-type": "application/json", **sign(not_utf8)})
        huge = b'{"a": "' + b"x" * 1_100_000 + b'"}'
        r3 = await client.post(url + "/slack/events", content=huge, headers={"content-type": "application/json", **sign(huge)})
        weird = json.dumps({"type": "event_callback", "event_id": "Ev1", "event": ["not", "a", "dict"]}).encode()
        r4 = await client.post(url + "/slack/events", content=weird, headers={"content-type": "application/json", **sign(weird)})
    assert (r1.status_code, r2.status_code, r3.status_code, r4.status_code) == (400, 400, 413, 400)
    assert not await redis.exists(keys.jobs)


async def test_feedback_click_is_stored_with_the_trace(bot, redis, keys, slack: FakeSlack) -> None:
    url, adapter = bot
    payload = block_action(action_id="aic_feedback_up", value="trace-77", label="👍 Helpful", channel=CHANNEL,
                           message_ts="1800000001.000001", thread_ts="1700000001.000100")
    assert (await post_action(url, payload)).status_code == 200
    stored = await redis.hgetall(keys.feedback("trace-77"))
    [(field, value)] = stored.items()
    assert field == f"slack:{TEAM}:U0USER01".encode()
    assert json.loads(value)["value"] == "helpful"
    await adapter._background.drain()
    assert slack.ephemeral and slack.ephemeral[0]["user"] == "U0USER01"
    assert not await redis.exists(keys.jobs)  # feedback is not a question


async def test_button_pick_is_enqueued_once_and_the_buttons_go_away(bot, redis, keys, slack: FakeSlack) -> None:
    url, adapter = bot
    clarify = slack._m_chat_postMessage({"channel": CHANNEL, "thread_ts": "1700000001.000100", "text": "Which?",
                                         "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "Which?"}},
                                                    {"type": "actions", "block_id": "aic_clarify", "elements": []}]})
    payload = block_action(action_id="aic_clarify_1", value="mindie-llm", label="MindIE-LLM", channel=CHANNEL,
                           message_ts=clarify["ts"], thread_ts="1700000001.000100",
                           blocks=slack.find(CHANNEL, clarify["ts"]).blocks)
    assert (await post_action(url, payload)).status_code == 200
    assert (await post_action(url, payload)).status_code == 200  # double click
    [job] = await jobs(redis, keys)
    assert (job.choice, job.text, job.thread) == ("mindie-llm", "MindIE-LLM", "1700000001.000100")
    await adapter._background.drain()
    updated = slack.find(CHANNEL, clarify["ts"])
    assert updated.buttons() == [] and "MindIE-LLM" in json.dumps(updated.blocks)


async def test_redis_down_is_503_so_slack_retries(make_settings, keys, slack: FakeSlack) -> None:
    # no client-side retries: the point is what the endpoint answers once Redis gives up
    dead = aioredis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    settings = make_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
    adapter = SlackAdapter(AdapterDeps(settings=settings, redis=dead, ingress=Ingress(dead, keys, 600)))
    runner = await serve(adapter)
    try:
        response = await post_event(runner.url, event_callback(mention("q", ts="1700000001.000100")))
        follow_up = await post_event(
            runner.url, event_callback(message("more", ts="1700000002.000100", thread_ts="1700000001.000100"))
        )
        assert (response.status_code, follow_up.status_code) == (503, 503)
    finally:
        await runner.stop()
        await dead.aclose()


async def test_an_oversized_chunked_body_is_refused_without_a_content_length(bot, redis, keys) -> None:
    url, _ = bot
    huge = b'{"type": "event_callback", "a": "' + b"x" * 1_100_000 + b'"}'

    async def chunks():  # no Content-Length: the cap must hold while reading, not only on the header
        for start in range(0, len(huge), 64_000):
            yield huge[start : start + 64_000]

    async with httpx.AsyncClient() as client:
        response = await client.post(url + "/slack/events", content=chunks(),
                                     headers={"content-type": "application/json", **sign(huge)})
    assert response.status_code == 413
    assert not await redis.exists(keys.jobs)
