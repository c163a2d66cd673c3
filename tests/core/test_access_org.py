"""Organisation boundaries: a workspace/tenant allowlist admits the *sender's* organisation, not the workspace
the event was delivered to. A Slack Connect user of another team and a Feishu user of another tenant (an
external group) arrive under our own team id / tenant key and must still be refused.

Real parsers on platform-shaped payloads, through Ingress and Redis.
"""
from __future__ import annotations

import itertools

from adapters.feishu.parse import CHOICE_ACTION, CardChoice, Skipped, parse_card_action, parse_message_event
from adapters.registry import platform_names
from adapters.slack.blocks import CLARIFY_ACTION_PREFIX
from adapters.slack.parse import parse_choice, parse_event
from core.access import AccessPolicy
from core.ingress import Ingress, SubmitOutcome
from core.messages import InboundMessage
from tests.support import fake_slack
from tests.support.fake_feishu import card_action_event, message_event

NAMES = platform_names()  # the registered platforms' names, as the bot passes them to core/access.py

OURS, FOREIGN = fake_slack.TEAM, "T0FOREIGN"
_ids = itertools.count(1)


def slack_connect(user_team: str | None, *, profile_team: str | None = None) -> InboundMessage:
    """A mention in a Slack Connect channel: the envelope (`team_id`, `authorizations`) and the event's `team`
    name our workspace, which received it; `user_team` / `user_profile.team` name the author's own."""
    n = next(_ids)
    event = fake_slack.mention("vllm-ascend fails", ts=f"{n}.000200", user=f"U0PERSON{n}")
    event["source_team"] = OURS
    if user_team is not None:
        event["user_team"] = user_team
    if profile_team is not None:
        event["user_profile"] = {"name": "someone", "team": profile_team}
    candidate = parse_event(fake_slack.event_callback(event, team=OURS), fake_slack.BOT_USER)
    assert candidate is not None and candidate.message.workspace == OURS
    return candidate.message


def feishu_external(sender_tenant: str) -> InboundMessage:
    """A message in an external group: delivered to our tenant (header.tenant_key), sent by a user whose own
    tenant is `event.sender.tenant_key`."""
    payload = message_event("vllm-ascend 报错", tenant_key="tenant1")
    payload["event"]["sender"]["tenant_key"] = sender_tenant
    msg = parse_message_event(payload, "ou_bot")
    assert not isinstance(msg, Skipped)
    return msg


async def outcome(redis, keys, policy: AccessPolicy, message: InboundMessage) -> SubmitOutcome:
    return (await Ingress(redis, keys, 60, policy).submit(message)).outcome


async def test_a_slack_connect_user_of_another_team_is_refused_although_the_channel_team_is_allowed(redis, keys) -> None:
    policy = NAMES.policy([f"slack:{OURS}"], [], [])
    assert await outcome(redis, keys, policy, slack_connect(FOREIGN)) is SubmitOutcome.NOT_ALLOWED
    assert await outcome(redis, keys, policy, slack_connect(None, profile_team=FOREIGN)) is SubmitOutcome.NOT_ALLOWED
    assert await outcome(redis, keys, policy, slack_connect(OURS)) is SubmitOutcome.ENQUEUED
    # an allowlist naming the other team admits its users, in the same channel of ours
    other = NAMES.policy([f"slack:{FOREIGN}"], [], [])
    assert await outcome(redis, keys, other, slack_connect(FOREIGN)) is SubmitOutcome.ENQUEUED


async def test_a_slack_connect_button_click_is_checked_against_the_clickers_team(redis, keys) -> None:
    payload = fake_slack.block_action(action_id=f"{CLARIFY_ACTION_PREFIX}0", value="vllm-ascend", label="vllm-ascend",
                                      channel="C0CHAN01", message_ts="1800000002.000001", thread_ts="1700000002.000100")
    payload["user"]["team_id"] = FOREIGN  # `team` (where the click was delivered) stays ours
    candidate = parse_choice(payload)
    assert candidate is not None and candidate.message.workspace == OURS
    policy = NAMES.policy([f"slack:{OURS}"], [], [])
    assert await outcome(redis, keys, policy, candidate.message) is SubmitOutcome.NOT_ALLOWED


async def test_a_feishu_user_of_another_tenant_is_refused(redis, keys) -> None:
    policy = NAMES.policy(["feishu:tenant1"], [], [])
    assert await outcome(redis, keys, policy, feishu_external("tenant-outside")) is SubmitOutcome.NOT_ALLOWED
    assert await outcome(redis, keys, policy, feishu_external("tenant1")) is SubmitOutcome.ENQUEUED


async def test_a_feishu_card_click_from_another_tenant_is_refused(redis, keys) -> None:
    value = {"aic": CHOICE_ACTION, "key": "vllm-ascend", "label": "vllm-ascend", "thread": "om_root", "chat": "oc_chat"}
    payload = card_action_event(value, open_message_id="om_card")
    payload["event"]["operator"]["tenant_key"] = "tenant-outside"
    choice = parse_card_action(payload)
    assert isinstance(choice, CardChoice)
    policy = NAMES.policy(["feishu:tenant1"], [], [])
    assert await outcome(redis, keys, policy, choice.message) is SubmitOutcome.NOT_ALLOWED


def test_an_unknown_sender_organisation_is_never_admitted_by_a_workspace_list() -> None:
    # Without the sender's team the workspace list cannot be checked: it fails closed, and only on the
    # platforms that carry one (Telegram and WeCom match the workspace they were delivered to, as before).
    policy = NAMES.policy(["slack:T1", "feishu:tenant1", "wecom:BOT1"], [], [])
    assert not policy.allows_actor("slack", "T1", "C1", "U1")
    assert policy.allows_actor("slack", "T1", "C1", "U1", "T1")
    assert not policy.allows_actor("slack", "T1", "C1", "U1", "T2")
    assert not policy.allows_actor("feishu", "tenant1", "oc_1", "ou_1")
    assert policy.allows_actor("wecom", "BOT1", "grp", "zhangsan")
    assert NAMES.policy([], [], ["slack:U1"]).allows_actor("slack", "T1", "C1", "U1")  # no workspace list: no check
