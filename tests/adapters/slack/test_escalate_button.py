"""Slack: the Escalate button sits beside 👍/👎 under an answer; a click through Bolt enqueues the choice."""
from __future__ import annotations

import asyncio

from adapters.base import AdapterDeps
from adapters.slack.adapter import SlackAdapter
from core.escalate import ESCALATE_CHOICE
from core.ingress import Ingress
from core.messages import InboundMessage, Reply, ReplyKind
from tests.support.fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack, block_action
from tests.support.rendered import slack_messages


def test_an_answer_about_a_product_offers_escalate_beside_the_feedback_buttons() -> None:
    reply = Reply(ReplyKind.ANSWER, "Upgrade CANN.", "en", repos=("vllm-project/vllm-ascend",), trace_id="abc")
    [message] = slack_messages(reply)
    actions = message.blocks[-1]["elements"]
    assert [(e["action_id"], e["value"]) for e in actions] == [
        ("aic_feedback_up", "abc"), ("aic_feedback_down", "abc"), ("aic_clarify_escalate", ESCALATE_CHOICE)]


async def test_an_escalate_click_enqueues_the_escalate_choice_in_the_thread_and_keeps_the_buttons(make_settings, redis, keys) -> None:
    async with FakeSlack() as slack:
        settings = make_settings(slack_bot_token=BOT_TOKEN, slack_app_token=APP_TOKEN, slack_api_url=slack.api_url)
        adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
        await adapter.start()
        try:
            await slack.wait_for_socket()
            click = block_action(action_id="aic_clarify_escalate", value=ESCALATE_CHOICE, label="📮 Open an upstream issue",
                                 channel="C0CHAN01", message_ts="1800000001.000001", thread_ts="1700000001.000100")
            await slack.wait_for_ack(await slack.push(click, kind="interactive"))
            for _ in range(100):
                if await redis.xlen(keys.jobs):
                    break
                await asyncio.sleep(0.02)
            [(_, fields)] = await redis.xrange(keys.jobs)
            queued = InboundMessage.from_json(fields[b"message"])
            assert (queued.choice, queued.thread) == (ESCALATE_CHOICE, "1700000001.000100")
            await asyncio.sleep(0.1)
            assert not slack.calls_to("chat.update")  # the answer keeps its buttons
        finally:
            await adapter.stop()
            await asyncio.sleep(0)
