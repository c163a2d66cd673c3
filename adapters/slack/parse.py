"""Slack payloads → `InboundMessage`, or a reason to ignore them (pure; no I/O).

Every field is read defensively: a payload that is not what we expect is ignored,
never a crash. Decisions that need Redis (is this thread one the bot answers in?)
are returned as flags for the caller.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from adapters.slack.blocks import CLARIFY_ACTION_PREFIX, FEEDBACK_ACTIONS
from adapters.slack.dedupe import SlackDedupeIds
from core.messages import InboundMessage

PLATFORM = "slack"

# Subtypes that are still a person writing a new message; everything else (edits, deletes,
# joins, bot_message, channel topic changes, ...) is not a question.
_USER_SUBTYPES = {None, "thread_broadcast", "file_share"}
_ID = re.compile(r"^[A-Z0-9][A-Z0-9._-]{0,63}$", re.IGNORECASE)
_TS = re.compile(r"^\d{1,12}\.\d{1,9}$")
_CHOICE_KEY = re.compile(r"^[\w.:/+-]{1,64}$")
_TRACE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")
MAX_TEXT = 40_000  # Slack's own message limit; anything longer is not a real message


@dataclass(frozen=True)
class Candidate:
    """A parsed user message. `needs_engaged_thread`: accept only if the bot already talks in this thread."""

    message: InboundMessage
    needs_engaged_thread: bool
    dedupe_ids: tuple[str, ...]


@dataclass(frozen=True)
class Feedback:
    trace_id: str
    value: str  # "helpful" | "not_helpful"
    workspace: str
    user: str
    channel: str
    message_ts: str
    user_team: str = ""  # the clicker's own team (`user.team_id`): what the workspace allowlist checks


def _event_user_team(event: dict[str, Any]) -> str:
    """The team of the person who wrote a message event, not of the workspace it was delivered to.

    In a Slack Connect channel the envelope's `team_id` (and `authorizations`) name the installation
    that received the event, so a user of another organisation arrives under our own team id. Message
    and app_mention events in shared channels carry `user_team`, the author's team (`source_team` is
    where it was posted; api.slack.com/enterprise/shared-channels, "Slack Connect: working with channels
    between organizations"), and, when Slack attaches the author's `user_profile`, its `team`. The
    event's own `team` is read only when both are missing: outside shared channels it names the same
    workspace. Nothing found: "" (a workspace allowlist then admits nobody).
    """
    profile = event.get("user_profile") if isinstance(event.get("user_profile"), dict) else {}
    return _id(event.get("user_team")) or _id(profile.get("team")) or _id(event.get("team"))


def _user_action_team(user_obj: dict[str, Any]) -> str:
    """The clicker's own team: interaction payloads carry it as `user.team_id` (block_actions
    reference); the top-level `team` is the workspace the click was delivered to, as above."""
    return _id(user_obj.get("team_id"))


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _id(value: Any) -> str:
    text = _str(value)
    return text if _ID.match(text) else ""


def _ts(value: Any) -> str:
    text = _str(value)
    return text if _TS.match(text) else ""


def strip_bot_mention(text: str, bot_user_id: str) -> str:
    if not bot_user_id:
        return text
    # the mention and one following space go, so "hey <@B> why" reads "hey why"
    return re.sub(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>[ \t]?", "", text)


_LINK = re.compile(r"<([^<>|\s]+)(?:\|([^<>]*))?>")


def slack_to_plain(text: str) -> str:
    """Slack's wire format → plain text for the core: links, mentions and entities resolved."""

    def repl(match: re.Match[str]) -> str:
        target, label = match.group(1), match.group(2)
        if target.startswith("@"):
            return "@" + (label or target[1:])
        if target.startswith("#"):
            return "#" + (label or target[1:])
        if target.startswith("!"):
            name = label or target[1:].split("^")[0]
            return "@" + name.lstrip("@")
        if label and label != target and not target.endswith(label):
            return f"{label} ({target})"
        return target.removeprefix("mailto:") if label else target

    return html.unescape(_LINK.sub(repl, text))


def clean_user_text(text: str, bot_user_id: str) -> str:
    # inner whitespace is kept as is: questions often carry indented code or tracebacks
    return slack_to_plain(strip_bot_mention(text, bot_user_id)).strip()


def _bot_mentioned(text: str, bot_user_id: str) -> bool:
    return bool(bot_user_id) and re.search(rf"<@{re.escape(bot_user_id)}(?:\|[^>]*)?>", text) is not None


def parse_event(body: dict[str, Any], bot_user_id: str, bot_id: str = "") -> Candidate | None:
    """An Events API envelope (`event_callback`) → a question candidate, or None to ignore it."""
    event = body.get("event")
    if not isinstance(event, dict):
        return None
    kind = event.get("type")
    if kind not in ("app_mention", "message"):
        return None
    subtype = event.get("subtype")
    if subtype not in _USER_SUBTYPES or event.get("hidden") or "edited" in event and kind == "app_mention":
        return None
    user = _id(event.get("user"))
    if not user or event.get("bot_id") or event.get("bot_profile") or user == bot_user_id:
        return None  # other bots (and ourselves): never answer a bot, that is how loops start
    if bot_id and event.get("bot_id") == bot_id:
        return None
    channel, ts = _id(event.get("channel")), _ts(event.get("ts"))
    event_id = _str(body.get("event_id"))
    if not channel or not ts or not event_id:
        return None
    raw_text = _str(event.get("text"))
    if len(raw_text) > MAX_TEXT:
        raw_text = raw_text[:MAX_TEXT]
    thread_ts = _ts(event.get("thread_ts"))
    channel_type = _str(event.get("channel_type"))
    is_direct = channel_type == "im" or (not channel_type and channel.startswith("D"))
    team = _id(body.get("team_id")) or _id(event.get("team"))
    user_team = _event_user_team(event)
    needs_engaged = False
    if kind == "message" and not is_direct:
        # Channel messages come here only for follow-ups in a thread the bot answers in;
        # top-level mentions arrive as app_mention.
        if not thread_ts:
            return None
        needs_engaged = True
    message = InboundMessage(
        platform=PLATFORM,
        workspace=team,
        channel=channel,
        thread=thread_ts or ts,
        sender=user,
        text=clean_user_text(raw_text, bot_user_id),
        message_id=ts,
        event_id=event_id,
        is_direct=is_direct,
        sender_org=user_team,
        reply_context={
            "recipient_team": user_team or team,
            "mentioned": _bot_mentioned(raw_text, bot_user_id),
        },
    )
    return Candidate(message, needs_engaged, (SlackDedupeIds.message(team, channel, ts),))


def _action(payload: dict[str, Any]) -> dict[str, Any] | None:
    """The clicked element of a `block_actions` payload; None for any other payload."""
    if payload.get("type") != "block_actions":
        return None
    actions = payload.get("actions")
    if not isinstance(actions, list) or not actions or not isinstance(actions[0], dict):
        return None
    return actions[0]


def _container(payload: dict[str, Any]) -> tuple[str, str, str]:
    """(channel, message ts, thread ts) of the message that holds the clicked button."""
    container = payload.get("container") if isinstance(payload.get("container"), dict) else {}
    message = payload.get("message") if isinstance(payload.get("message"), dict) else {}
    channel_obj = payload.get("channel") if isinstance(payload.get("channel"), dict) else {}
    channel = _id(channel_obj.get("id")) or _id(container.get("channel_id"))
    message_ts = _ts(message.get("ts")) or _ts(container.get("message_ts"))
    thread_ts = _ts(message.get("thread_ts")) or _ts(container.get("thread_ts")) or message_ts
    return channel, message_ts, thread_ts


def parse_choice(payload: dict[str, Any]) -> Candidate | None:
    """A click on a clarification button → the user's pick, in the thread of the question."""
    action = _action(payload)
    if action is None or not _str(action.get("action_id")).startswith(CLARIFY_ACTION_PREFIX):
        return None
    key = _str(action.get("value"))
    if not _CHOICE_KEY.match(key):
        return None  # button values come back from the client: untrusted
    label_obj = action.get("text") if isinstance(action.get("text"), dict) else {}
    label = _str(label_obj.get("text"))[:200] or key
    user_obj = payload.get("user") if isinstance(payload.get("user"), dict) else {}
    team_obj = payload.get("team") if isinstance(payload.get("team"), dict) else {}
    user, team = _id(user_obj.get("id")), _id(team_obj.get("id")) or _id(user_obj.get("team_id"))
    channel, message_ts, thread_ts = _container(payload)
    if not user or not channel or not message_ts:
        return None
    pick_id = SlackDedupeIds.pick(team, channel, message_ts, user)
    message = InboundMessage(
        platform=PLATFORM,
        workspace=team,
        channel=channel,
        thread=thread_ts,
        sender=user,
        text=label,
        message_id=message_ts,
        event_id=pick_id,
        is_direct=channel.startswith("D"),
        choice=key,
        sender_name=_str(user_obj.get("username") or user_obj.get("name"))[:80],
        sender_org=_user_action_team(user_obj),
        reply_context={"recipient_team": _user_action_team(user_obj) or team, "source": "button"},
    )
    return Candidate(message, needs_engaged_thread=False, dedupe_ids=())


def parse_feedback(payload: dict[str, Any]) -> Feedback | None:
    action = _action(payload)
    if action is None:
        return None
    value = FEEDBACK_ACTIONS.get(_str(action.get("action_id")))
    trace_id = _str(action.get("value"))
    if value is None or not _TRACE_ID.match(trace_id):
        return None
    user_obj = payload.get("user") if isinstance(payload.get("user"), dict) else {}
    team_obj = payload.get("team") if isinstance(payload.get("team"), dict) else {}
    user = _id(user_obj.get("id"))
    channel, message_ts, _ = _container(payload)
    if not user:
        return None
    return Feedback(trace_id, value, _id(team_obj.get("id")), user, channel, message_ts, _user_action_team(user_obj))
