"""Allowlists qualified by platform, on messages parsed by each adapter's real parser, through Ingress and Redis."""
from __future__ import annotations

import itertools


from adapters.feishu.parse import Skipped, parse_message_event
from adapters.registry import platform_names
from adapters.slack.parse import parse_event
from adapters.telegram.inbound import BotIdentity, message_to_inbound
from adapters.wecom.parse import MessageCallback, parse_callback, to_inbound
from core.access import AccessPolicy
from core.ingress import Ingress, SubmitOutcome
from core.messages import InboundMessage
from tests.support import fake_slack, fake_telegram
from tests.support.fake_feishu import message_event
from tests.support.fake_wecom import message_body

NAMES = platform_names()  # the registered platforms' names, as the bot passes them to core/access.py

_ids = itertools.count(1)


def telegram(user_id: int = 42, chat: dict | None = None) -> InboundMessage:
    update = fake_telegram.message_update(
        "vllm-ascend fails", sender=fake_telegram.user(user_id), chat=chat or fake_telegram.private_chat(user_id)
    )
    msg = message_to_inbound(update, BotIdentity(fake_telegram.BOT_ID, fake_telegram.BOT_USERNAME))
    assert msg is not None
    return msg


def slack(user: str = "U0USER01", team: str = fake_slack.TEAM) -> InboundMessage:
    n = next(_ids)
    event = fake_slack.mention("vllm-ascend fails", ts=f"{n}.000100", user=user)
    event["team"] = team  # the author's team: a user of the workspace the event was delivered to
    candidate = parse_event(fake_slack.event_callback(event, team=team), fake_slack.BOT_USER)
    assert candidate is not None
    return candidate.message


def feishu(open_id: str = "ou_user", tenant: str = "tenant1") -> InboundMessage:
    msg = parse_message_event(message_event("vllm-ascend 报错", sender_open_id=open_id, tenant_key=tenant), "ou_bot")
    assert not isinstance(msg, Skipped)
    return msg


def wecom(user: str = "zhangsan", chat_id: str | None = None) -> InboundMessage:
    cb = parse_callback(message_body("vllm-ascend 报错", user=user, chat_id=chat_id))
    assert isinstance(cb, MessageCallback)
    return to_inbound(cb.chat, msgid=cb.msgid, text=cb.text, reply_context={})


async def outcome(redis, keys, policy: AccessPolicy, message: InboundMessage) -> SubmitOutcome:
    return (await Ingress(redis, keys, 60, policy).submit(message)).outcome


async def test_telegram_can_be_restricted_by_user_without_shutting_out_other_platforms(redis, keys) -> None:
    policy = NAMES.policy([], [], ["telegram:42"])
    assert await outcome(redis, keys, policy, telegram(42)) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, policy, telegram(43)) is SubmitOutcome.NOT_ALLOWED
    # the entry names Telegram: a Slack user with the same id list is not affected by it
    assert await outcome(redis, keys, policy, slack("U0OTHER1")) is SubmitOutcome.ENQUEUED


async def test_telegram_group_by_chat_id(redis, keys) -> None:
    policy = NAMES.policy([], ["telegram:-100200300"], [])
    group = fake_telegram.group_chat(-100_200_300)
    update = fake_telegram.message_update(
        f"@{fake_telegram.BOT_USERNAME} vllm-ascend fails", chat=group, mention=f"@{fake_telegram.BOT_USERNAME}"
    )
    in_group = message_to_inbound(update, BotIdentity(fake_telegram.BOT_ID, fake_telegram.BOT_USERNAME))
    assert in_group is not None
    assert await outcome(redis, keys, policy, in_group) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, policy, telegram(42)) is SubmitOutcome.NOT_ALLOWED  # a private chat is another chat


async def test_wecom_can_be_restricted_by_user(redis, keys) -> None:
    policy = NAMES.policy([], [], ["wecom:zhangsan"])
    assert await outcome(redis, keys, policy, wecom("zhangsan")) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, policy, wecom("lisi")) is SubmitOutcome.NOT_ALLOWED
    assert await outcome(redis, keys, policy, wecom("lisi", chat_id="wrkGroup1")) is SubmitOutcome.NOT_ALLOWED


async def test_wecom_by_bot_id_as_workspace(redis, keys) -> None:
    policy = NAMES.policy(["wecom:BOT1"], [], [])
    assert await outcome(redis, keys, policy, wecom("lisi")) is SubmitOutcome.ENQUEUED
    other_bot = to_inbound(
        parse_callback(message_body("q", user="lisi", bot_id="BOT2")).chat, msgid="m-x", text="q", reply_context={}
    )
    assert await outcome(redis, keys, policy, other_bot) is SubmitOutcome.NOT_ALLOWED


async def test_feishu_by_open_id_and_lark_alias(redis, keys) -> None:
    for entry in ("feishu:ou_user", "lark:ou_user", "Feishu:ou_user"):
        policy = NAMES.policy([], [], [entry])
        assert await outcome(redis, keys, policy, feishu("ou_user")) is SubmitOutcome.ENQUEUED, entry
        assert await outcome(redis, keys, policy, feishu("ou_stranger")) is SubmitOutcome.NOT_ALLOWED, entry


async def test_slack_by_team(redis, keys) -> None:
    policy = NAMES.policy(["slack:T0TEAM01"], [], [])
    assert await outcome(redis, keys, policy, slack()) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, policy, slack(team="T0FOREIGN")) is SubmitOutcome.NOT_ALLOWED
    assert await outcome(redis, keys, policy, feishu()) is SubmitOutcome.ENQUEUED  # Feishu is not named


async def test_unqualified_entries_keep_their_meaning_on_every_platform(redis, keys) -> None:
    # Before qualifiers, ALLOWED_USERS=["42"] admitted id 42 wherever it came from and nobody else.
    policy = NAMES.policy([], [], ["42"])
    assert await outcome(redis, keys, policy, telegram(42)) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, policy, slack()) is SubmitOutcome.NOT_ALLOWED
    assert await outcome(redis, keys, policy, wecom()) is SubmitOutcome.NOT_ALLOWED
    # a mix: the unqualified entry and the Slack one both apply to Slack
    mixed = NAMES.policy([], [], ["42", "slack:U0USER01"])
    assert await outcome(redis, keys, mixed, slack("U0USER01")) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, mixed, telegram(42)) is SubmitOutcome.ENQUEUED
    assert await outcome(redis, keys, mixed, telegram(43)) is SubmitOutcome.NOT_ALLOWED


def test_a_misspelt_platform_is_a_literal_value_and_is_reported() -> None:
    policy = NAMES.policy([], [], ["slak:U0USER01", "telegram:42"])
    assert not policy.allows(slack())  # fails closed: the literal "slak:U0USER01" is nobody's id
    assert policy.unknown_qualifiers() == ["slak:U0USER01"]
    assert NAMES.policy([], [], ["telegram:42", "ou_x"]).unknown_qualifiers() == []


def test_which_platforms_are_open_to_everyone() -> None:
    assert AccessPolicy().open_platforms(["slack", "telegram"]) == ["slack", "telegram"]
    policy = NAMES.policy(["slack:T1"], [], ["wecom:zhangsan"])
    assert policy.open_platforms(["slack", "telegram", "feishu", "wecom"]) == ["telegram", "feishu"]
    assert NAMES.policy(["T1"], [], []).open_platforms(["slack", "telegram"]) == []  # unqualified: applies everywhere


def test_allows_actor_is_the_message_rule() -> None:
    policy = NAMES.policy(["slack:T1"], ["C1"], ["telegram:42"])
    assert policy.allows_actor("slack", "T1", "C1", "U9", "T1")  # on Slack the user's own team is checked
    assert not policy.allows_actor("slack", "T1", "C1", "U9", "T2")
    assert not policy.allows_actor("slack", "T1", "C2", "U9", "T1")
    assert policy.allows_actor("telegram", "bot", "C1", "42")
    assert not policy.allows_actor("telegram", "bot", "C1", "43")
