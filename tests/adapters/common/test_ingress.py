"""The shared ingress path (adapters/common/ingress.py) fed by each platform's own parse of a
payload fixture (tests/adapters/common/fixtures/), on a real Redis."""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis.asyncio as aioredis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from starlette.applications import Starlette

from adapters.base import AdapterDeps
from adapters.common.ingress import REDIS_DOWN, Candidate, IngressPath, Skip, unavailable
from adapters.feishu.parse import parse_message_event
from adapters.registry import platform, platform_names
from adapters.slack.adapter import SlackAdapter
from adapters.slack.inbound import SlackInbox
from adapters.slack.state import EngagedThreads
from adapters.telegram.inbound import BotIdentity, message_to_inbound
from adapters.wecom.parse import MessageCallback, parse_callback, to_inbound
from core.access import AccessPolicy
from core.ingress import Ingress, SubmitOutcome
from core.keys import Keys
from core.messages import InboundMessage
from tests.support.fake_http import free_port
from tests.support.fake_slack import BOT_ID, BOT_TOKEN, BOT_USER, SIGNING_SECRET, FakeSlack, sign

NAMES = platform_names()  # the registered platforms' names, as the bot passes them to core/access.py

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def slack_candidate(name: str) -> Candidate:
    from adapters.slack.parse import parse_event  # noqa: PLC0415

    parsed = parse_event(fixture(name), BOT_USER, BOT_ID)
    assert parsed is not None
    return Candidate(parsed.message, parsed.dedupe_ids)


def telegram_candidate() -> Candidate:
    message = message_to_inbound(fixture("telegram_message.json"), BotIdentity(999, "copilot_bot"))
    assert message is not None
    return Candidate(message)


def feishu_candidate(event_id: str = "") -> Candidate:
    payload = fixture("feishu_message.json")
    if event_id:
        payload["header"]["event_id"] = event_id
    message = parse_message_event(payload, "ou_bot")
    assert isinstance(message, InboundMessage)
    return Candidate(message, (platform("feishu").dedupe_ids.message(message.message_id),))


def wecom_candidate() -> Candidate:
    callback = parse_callback(fixture("wecom_text.json"), "Copilot")
    assert isinstance(callback, MessageCallback)
    return Candidate(to_inbound(callback.chat, msgid=callback.msgid, text=callback.text, reply_context={}))


CANDIDATES: dict[str, Callable[[], Candidate]] = {
    "slack": lambda: slack_candidate("slack_mention.json"),
    "telegram": telegram_candidate,
    "feishu": feishu_candidate,
    "wecom": wecom_candidate,
}


class CountingRedis(aioredis.Redis):
    """A real client that counts the commands it sends (a script call is one EVALSHA)."""

    sent: int = 0

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        self.sent += 1
        return await super().execute_command(*args, **options)


@pytest.fixture
async def counting(redis_url: str) -> AsyncIterator[CountingRedis]:
    client = CountingRedis.from_url(redis_url)
    try:
        yield client
    finally:
        await client.aclose()


def inbox(redis: aioredis.Redis, keys: Keys, access: AccessPolicy = AccessPolicy(), **kwargs: Any) -> SlackInbox:
    ingress = Ingress(redis, keys, 600, access, **kwargs)
    return SlackInbox(ingress, EngagedThreads(redis, keys, 3600), redis, keys, require_mention_in_threads=False)


def test_dedupe_ids_keep_the_formats_already_stored_in_redis() -> None:
    # Markers written by the previous release live for hours (Feishu retries for 7): a new format
    # would let every retry in flight through as a new question.
    slack, feishu = platform("slack").dedupe_ids, platform("feishu").dedupe_ids
    assert slack.message("T1", "C1", "1.2") == "msg:T1:C1:1.2"
    assert slack.pick("T1", "C1", "1.2", "U1") == "pick:T1:C1:1.2:U1"
    assert feishu.message("om_1") == "om_1"
    assert feishu.card("om_c") == "card:om_c" and feishu.card("") == ""
    assert platform("telegram").dedupe_ids.keyboard("tok") == "keyboard:tok"
    assert platform("wecom").dedupe_ids.card("clarify_1") == "card:clarify_1"


@pytest.mark.parametrize("platform", sorted(CANDIDATES))
async def test_a_re_sent_event_is_enqueued_once(platform: str, redis, keys) -> None:
    path = IngressPath(Ingress(redis, keys, 600), platform)
    candidate = CANDIDATES[platform]()
    results = await asyncio.gather(*(path.take(candidate, retry=str(i)) for i in range(12)))
    outcomes = [r.outcome for r in results if r is not None]
    assert outcomes.count(SubmitOutcome.ENQUEUED) == 1 and outcomes.count(SubmitOutcome.DUPLICATE) == 11
    [(_, fields)] = await redis.xrange(keys.jobs)
    assert InboundMessage.from_json(fields[b"message"]) == candidate.message
    assert 0 < await redis.ttl(keys.dedupe(platform, candidate.message.event_id)) <= 600


async def test_feishu_re_push_under_a_new_event_id_is_the_same_question(redis, keys) -> None:
    path = IngressPath(Ingress(redis, keys, 600), "feishu")
    first = await path.take(feishu_candidate())
    again = await path.take(feishu_candidate(event_id="a-new-event-id"))
    assert first is not None and again is not None
    assert (first.outcome, again.outcome) == (SubmitOutcome.ENQUEUED, SubmitOutcome.DUPLICATE)
    assert await redis.xlen(keys.jobs) == 1


async def test_a_skip_writes_nothing(redis, keys) -> None:
    path = IngressPath(Ingress(redis, keys, 600), "slack")
    assert await path.take(Skip("an edit")) is None
    assert not await redis.exists(keys.jobs)


async def test_slack_mention_and_its_message_event_are_one_job(redis, keys) -> None:
    box = inbox(redis, keys)
    first = await box.on_event(fixture("slack_mention.json"), BOT_USER, BOT_ID)
    # Slack also sends the same message as a `message` event, under another event id
    second = await box.on_event(fixture("slack_same_message.json"), BOT_USER, BOT_ID)
    assert (first, second) == (SubmitOutcome.ENQUEUED, SubmitOutcome.DUPLICATE)
    assert await redis.xlen(keys.jobs) == 1


async def test_slack_ack_costs_one_redis_round_trip(counting: CountingRedis, keys) -> None:
    box = inbox(counting, keys)
    counting.sent = 0
    assert await box.on_event(fixture("slack_mention.json"), BOT_USER, BOT_ID) is SubmitOutcome.ENQUEUED
    assert counting.sent == 1  # dedupe + enqueue + marking the thread engaged: one script
    counting.sent = 0
    # a follow-up without a mention: the engaged-thread check rides in the same script
    assert await box.on_event(fixture("slack_thread_follow_up.json"), BOT_USER, BOT_ID) is SubmitOutcome.ENQUEUED
    assert counting.sent == 1
    assert await counting.xlen(keys.jobs) == 2


async def test_a_follow_up_in_a_thread_the_bot_is_not_in_writes_nothing(redis, keys) -> None:
    box = inbox(redis, keys)
    payload = fixture("slack_thread_follow_up.json")
    assert await box.on_event(payload, BOT_USER, BOT_ID) is None
    assert not await redis.exists(keys.jobs)
    assert not await redis.exists(keys.dedupe("slack", payload["event_id"]))  # a later retry is judged afresh


async def test_outside_the_allowlist_is_acked_never_queued_and_engages_no_thread(redis, keys) -> None:
    seen: list[tuple[str, SubmitOutcome]] = []
    policy = NAMES.policy([], [], ["slack:U0SOMEONE"])
    box = inbox(redis, keys, policy, on_submit=lambda p, o: seen.append((p, o)))
    assert await box.on_event(fixture("slack_mention.json"), BOT_USER, BOT_ID) is SubmitOutcome.NOT_ALLOWED
    assert await box.on_event(fixture("slack_thread_follow_up.json"), BOT_USER, BOT_ID) is SubmitOutcome.NOT_ALLOWED
    assert not await redis.exists(keys.jobs)
    event = fixture("slack_mention.json")["event"]
    assert not await EngagedThreads(redis, keys, 60).is_engaged("T0TEAM01", event["channel"], event["thread_ts"])
    assert seen == [("slack", SubmitOutcome.NOT_ALLOWED)] * 2  # the metric hook hears it


@pytest.mark.parametrize("platform", sorted(CANDIDATES))
async def test_allowlists_apply_to_every_platform(platform: str, redis, keys) -> None:
    policy = NAMES.policy([], [], [f"{platform}:nobody-here"])
    result = await IngressPath(Ingress(redis, keys, 600, policy), platform).take(CANDIDATES[platform]())
    assert result is not None and result.outcome is SubmitOutcome.NOT_ALLOWED
    assert not await redis.exists(keys.jobs)


def closed_port_client() -> aioredis.Redis:
    """A real client pointed at a port nothing listens on: every command fails at once."""
    return aioredis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))


async def test_redis_down_reaches_the_caller_and_the_answer_is_503_with_retry_after(keys) -> None:
    client = closed_port_client()
    try:
        with pytest.raises(REDIS_DOWN) as raised:
            await IngressPath(Ingress(client, keys, 600), "telegram").take(telegram_candidate())
    finally:
        await client.aclose()
    response = unavailable("telegram", raised.value)
    assert response.status_code == 503 and response.headers["retry-after"] == "5"


async def test_slack_http_event_with_redis_down_is_503_so_slack_retries(make_settings, keys) -> None:
    client = closed_port_client()
    async with FakeSlack() as slack:
        settings = make_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
        adapter = SlackAdapter(AdapterDeps(settings=settings, redis=client, ingress=Ingress(client, keys, 600)))
        body = (FIXTURES / "slack_mention.json").read_bytes()
        transport = httpx.ASGITransport(app=Starlette(routes=adapter.routes()))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
                response = await http.post("/slack/events", content=body, headers={"content-type": "application/json", **sign(body)})
        finally:
            await adapter.stop()
            await client.aclose()
    assert response.status_code == 503 and response.headers["retry-after"] == "5"


async def test_telegram_webhook_with_redis_down_is_503_so_telegram_retries(make_settings, keys) -> None:
    from adapters.telegram import create_adapter  # noqa: PLC0415
    from tests.support.fake_telegram import TOKEN, FakeTelegram  # noqa: PLC0415

    client = closed_port_client()
    async with FakeTelegram() as telegram:
        settings = make_settings(
            telegram_bot_token=TOKEN, telegram_api_url=telegram.api_url, telegram_webhook_secret="s3cret-s3cret",
            telegram_webhook_url="https://bot.example.invalid/telegram/webhook",
        )
        adapter = create_adapter(AdapterDeps(settings=settings, redis=client, ingress=Ingress(client, keys, 600)))
        assert adapter is not None
        transport = httpx.ASGITransport(app=Starlette(routes=adapter.routes()))
        try:
            async with httpx.AsyncClient(transport=transport, base_url="http://bot") as http:
                response = await http.post(
                    "/telegram/webhook", content=(FIXTURES / "telegram_message.json").read_bytes(),
                    headers={"content-type": "application/json", "x-telegram-bot-api-secret-token": "s3cret-s3cret"},
                )
        finally:
            await adapter.stop()
            await client.aclose()
    assert response.status_code == 503 and response.headers["retry-after"] == "5"


async def test_slack_events_and_clicks_share_one_auth_test_and_one_queue(make_settings, redis, keys) -> None:
    """Message events take the short way, clicks go through Bolt: both end in the same inbox, and
    Slack is asked who the bot is once."""
    from tests.support.fake_http import UvicornRunner  # noqa: PLC0415
    from tests.support.fake_slack import block_action, post_action, post_event  # noqa: PLC0415

    async with FakeSlack() as slack:
        settings = make_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
        adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
        runner = UvicornRunner(Starlette(routes=adapter.routes()))
        await runner.start()
        try:
            mention = fixture("slack_mention.json")
            assert (await post_event(runner.url, mention)).status_code == 200
            click = block_action(action_id="aic_clarify_0", value="mindie-llm", label="MindIE-LLM", channel="C0CHAN01",
                                 message_ts="1700000002.000100", thread_ts=mention["event"]["thread_ts"])
            assert (await post_action(runner.url, click)).status_code == 200
            assert (await post_event(runner.url, mention, retry_num=1)).status_code == 200
        finally:
            await runner.stop()
            await adapter.stop()
        assert slack.count("auth.test") == 1
    jobs = [InboundMessage.from_json(f[b"message"]) for _, f in await redis.xrange(keys.jobs)]
    assert [(j.text, j.choice) for j in jobs] == [("why does vllm-ascend OOM on 910B?", None), ("MindIE-LLM", "mindie-llm")]
