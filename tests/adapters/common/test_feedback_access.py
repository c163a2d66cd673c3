"""Feedback clicks obey the allowlists: a stranger's thumbs are acknowledged (200) and not stored.

Real signed/encrypted callbacks over HTTP to the real adapters, Redis behind them.
"""
from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from adapters.base import AdapterDeps
from adapters.registry import platform_names
from adapters.slack.adapter import SlackAdapter
from core.access import AccessPolicy
from core.ingress import Ingress
from core.messages import InboundMessage, Reply, ReplyKind
from tests.support.fake_http import UvicornRunner
from tests.support.fake_slack import BOT_TOKEN, SIGNING_SECRET, TEAM, FakeSlack, block_action, post_action
from tests.support.fake_wecom import FakeQyapi, Scripted, WeComCallbackClient, event_body, message_body
from tests.support.stack import running_bot

from starlette.applications import Starlette

NAMES = platform_names()  # the registered platforms' names, as the bot passes them to core/access.py

WECOM_TOKEN = "wecom-fb-token"
WECOM_AES = "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"


@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    async with FakeSlack() as fake:
        yield fake


async def _click(make_settings: Callable, redis, keys, slack: FakeSlack, policy: AccessPolicy, user: str,
                 user_team: str = TEAM) -> tuple[int, dict]:
    settings = make_settings(slack_bot_token=BOT_TOKEN, slack_signing_secret=SIGNING_SECRET, slack_api_url=slack.api_url)
    adapter = SlackAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600, policy)))
    runner = UvicornRunner(Starlette(routes=adapter.routes()))
    await runner.start()
    try:
        payload = block_action(action_id="aic_feedback_down", value="trace-9", label="👎", channel="C0CHAN01",
                               message_ts="1800000001.000001", thread_ts="1700000001.000100", user=user)
        payload["user"]["team_id"] = user_team  # the clicker's own team; `team` stays the receiving workspace
        status = (await post_action(runner.url, payload)).status_code
        await adapter._background.drain()
    finally:
        await runner.stop()
        await adapter.stop()
    return status, await redis.hgetall(keys.feedback("trace-9"))


async def test_slack_feedback_from_a_user_outside_the_allowlist_is_acked_and_ignored(make_settings, redis, keys, slack) -> None:
    policy = NAMES.policy([], [], ["slack:U0BOSS01"])
    status, stored = await _click(make_settings, redis, keys, slack, policy, user="U0STRANGER")
    assert status == 200 and stored == {}
    assert not slack.ephemeral  # no "thanks" either


async def test_slack_feedback_from_an_allowed_user_is_stored(make_settings, redis, keys, slack) -> None:
    policy = NAMES.policy([f"slack:{TEAM}"], [], ["slack:U0BOSS01"])
    status, stored = await _click(make_settings, redis, keys, slack, policy, user="U0BOSS01")
    assert status == 200 and list(stored) == [f"slack:{TEAM}:U0BOSS01".encode()]


async def test_slack_connect_feedback_from_another_team_is_not_stored(make_settings, redis, keys, slack) -> None:
    # The click arrives at our workspace (`team` is ours) from a Slack Connect user of another organisation.
    policy = NAMES.policy([f"slack:{TEAM}"], [], [])
    status, stored = await _click(make_settings, redis, keys, slack, policy, user="U0OUTSIDE", user_team="T0FOREIGN")
    assert status == 200 and stored == {}
    status, stored = await _click(make_settings, redis, keys, slack, policy, user="U0INSIDE")
    assert list(stored) == [f"slack:{TEAM}:U0INSIDE".encode()]


@pytest.fixture
async def qyapi() -> AsyncIterator[FakeQyapi]:
    async with FakeQyapi() as fake:
        yield fake


def _answer(message: InboundMessage) -> Reply:
    return Reply(ReplyKind.ANSWER, "Use torch_npu 2.5.1.", "en", trace_id="tr-fb")


async def test_wecom_feedback_from_a_user_outside_the_allowlist_is_acked_and_ignored(make_settings, qyapi) -> None:
    settings = make_settings(
        wecom_token=WECOM_TOKEN, wecom_encoding_aes_key=WECOM_AES, wecom_bot_id="BOT1", wecom_api_url=qyapi.url,
        allowed_users=["wecom:wangwu"],
    )
    async with running_bot(settings, conversation=Scripted(_answer)) as stack:
        wecom = WeComCallbackClient(stack.base_url, WECOM_TOKEN, WECOM_AES)
        first = await wecom.post(message_body("which torch_npu for vllm-ascend 0.9?", user="wangwu", chat_id="grp1"))
        sid: Any = first.reply["stream"]["id"]  # type: ignore[index]
        await wecom.refresh_until_finished(sid, stack.wait_idle)
        stranger = await wecom.post(event_body("feedback_event", {"id": sid, "type": 2, "content": "spam"},
                                               user="intruder", chat_id="grp1"))
        assert stranger.status == 200 and stranger.raw == b""
        assert await stack.redis.hgetall(stack.keys.feedback("tr-fb")) == {}
        owner = await wecom.post(event_body("feedback_event", {"id": sid, "type": 1}, user="wangwu", chat_id="grp1"))
        assert owner.status == 200
        stored = {k.decode(): v.decode() for k, v in (await stack.redis.hgetall(stack.keys.feedback("tr-fb"))).items()}
    assert set(stored) >= {"user:wangwu"} and "user:intruder" not in stored
    assert json.loads(stored["user:wangwu"])["type"] == 1
