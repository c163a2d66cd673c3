"""Socket Mode: apps.connections.open through SLACK_API_URL, envelopes over a real WebSocket, acks back."""
from __future__ import annotations

import asyncio

from adapters.base import AdapterDeps
from adapters.slack.adapter import SlackAdapter
from core.ingress import Ingress
from core.messages import InboundMessage
from tests.support.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack, block_action, event_callback, mention


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
