"""Socket Mode: apps.connections.open through SLACK_API_URL, envelopes over a real WebSocket, acks back."""
from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

from adapters.base import AdapterDeps
from adapters.slack.adapter import SlackAdapter
from bot.embedded_redis import start_embedded_redis
from core.ingress import Ingress
from core.messages import InboundMessage, Reply, ReplyKind
from tests.support.fake_slack import APP_TOKEN, BOT_TOKEN, TEAM, FakeSlack, block_action, event_callback, mention
from tests.support.stack import running_bot, jobs_enqueued


async def test_socket_mode_acks_enqueues_and_dedupes_resent_envelopes(make_settings, redis, keys) -> None:
    async with FakeSlack() as slack:
        settings = make_settings(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN, slack_api_url=slack.api_url)
        adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
        assert adapter.routes() == []  # no public endpoint in Socket Mode
        await adapter.start()
        try:
            await slack.wait_for_socket()
            assert slack.calls_to("apps.connections.open") and slack.calls[0].token == APP_TOKEN
            payload = event_callback(mention("socket question", ts="1700000001.000100"), event_id="EvSock1")
            first = await slack.push(payload)
            assert (await slack.wait_for_ack(first))["envelope_id"] == first
            # Slack re-sends when an ack is late: same event_id, retry_attempt set
            again = await slack.push(payload, retry_attempt=1)
            await slack.wait_for_ack(again)
            entries = await redis.xrange(keys.jobs)
            assert [InboundMessage.from_json(f[b"message"]).text for _, f in entries] == ["socket question"]

            click = block_action(action_id="aic_feedback_down", value="trace-s", label="👎", channel="C0CHAN01",
                                 message_ts="1800000001.000001", thread_ts="1700000001.000100")
            ack = await slack.wait_for_ack(await slack.push(click, kind="interactive"))
            assert ack is not None
            assert await redis.hlen(keys.feedback("trace-s")) == 1
        finally:
            await adapter.stop()
            await asyncio.sleep(0)


class Echo:
    """Stands in for the core: answers every question with a fixed notice naming it."""

    async def handle(self, message: InboundMessage, progress: Callable) -> Reply:
        return Reply(ReplyKind.NOTICE, f"answer to: {message.text}", "en")


async def _until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def test_socket_mode_redis_outage_leaves_the_envelope_unacked_until_redis_is_back(
    make_settings, tmp_path, caplog
) -> None:
    """Redis down: the envelope is not acked (Slack re-sends it); back up: the re-send is acked and answered once."""
    caplog.set_level(logging.INFO)
    data = tmp_path / "redis"
    server = start_embedded_redis(data, persist=False)  # private: this test stops and restarts it
    try:
        async with FakeSlack() as slack:
            settings = make_settings(
                redis_url=server.url, slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN,
                slack_api_url=slack.api_url, slack_post_interval_seconds=0.05, allowed_workspaces=[f"slack:{TEAM}"],
            )
            async with running_bot(settings, conversation=Echo()) as stack:
                await slack.wait_for_socket()
                server.stop()  # the outage
                payload = event_callback(mention("outage question", ts="1700000050.000100"), event_id="EvOutage1")
                lost = await slack.push(payload)
                # Bolt either acks the envelope or logs that it did not (status 503): wait for one of the two
                await _until(lambda: any(a.get("envelope_id") == lost for a in slack.acks) or any(
                    "Unsuccessful Bolt execution result (status: 503" in r.getMessage() for r in caplog.records))
                assert not any(a.get("envelope_id") == lost for a in slack.acks)
                assert any("slack request not taken" in r.getMessage() for r in caplog.records)

                server = await asyncio.to_thread(start_embedded_redis, data, server.port, persist=False)
                again = await slack.push(payload, retry_attempt=1)  # Slack re-sends: same event_id
                assert (await slack.wait_for_ack(again))["envelope_id"] == again
                await stack.wait_idle()
                assert jobs_enqueued(stack.components) == 1
                assert not stack.worker._stopping.is_set()
            [answer] = slack.in_thread("C0CHAN01", "1700000050.000100")
            assert answer.section_text() == "answer to: outage question"
            assert slack.count("apps.connections.open") == 1  # the socket survived the outage
    finally:
        server.stop()
