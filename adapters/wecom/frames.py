"""Reply bodies of the AI-bot protocol (pure). The same bodies go into an encrypted
passive reply (API mode) or into the `body` of a WebSocket frame (long connection)."""
from __future__ import annotations

import secrets
from typing import Any

# long-connection commands
SUBSCRIBE = "aibot_subscribe"
PING = "ping"
RESPOND_MSG = "aibot_respond_msg"
RESPOND_WELCOME = "aibot_respond_welcome_msg"
RESPOND_UPDATE = "aibot_respond_update_msg"
SEND_MSG = "aibot_send_msg"
MSG_CALLBACK = "aibot_msg_callback"
EVENT_CALLBACK = "aibot_event_callback"


def req_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def stream_body(
    stream_id: str,
    content: str,
    finish: bool,
    *,
    feedback_id: str | None = None,
    card: dict[str, Any] | None = None,
) -> dict[str, Any]:
    stream: dict[str, Any] = {"id": stream_id, "finish": finish, "content": content}
    if feedback_id:  # allowed on the first reply only
        stream["feedback"] = {"id": feedback_id}
    if card:  # a template card can go with one reply of the stream, once
        return {"msgtype": "stream_with_template_card", "stream": stream, "template_card": card}
    return {"msgtype": "stream", "stream": stream}


def text_body(content: str) -> dict[str, Any]:
    return {"msgtype": "text", "text": {"content": content}}


def markdown_body(content: str) -> dict[str, Any]:
    return {"msgtype": "markdown", "markdown": {"content": content}}


def card_body(card: dict[str, Any]) -> dict[str, Any]:
    return {"msgtype": "template_card", "template_card": card}


def update_card_body(card: dict[str, Any], userids: list[str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"response_type": "update_template_card", "template_card": card}
    if userids:
        body["userids"] = userids
    return body


def ws_frame(cmd: str, request_id: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    frame: dict[str, Any] = {"cmd": cmd, "headers": {"req_id": request_id}}
    if body is not None:
        frame["body"] = body
    return frame


def send_msg_frame(chat_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return ws_frame(SEND_MSG, req_id(SEND_MSG), {"chatid": chat_id, **body})
