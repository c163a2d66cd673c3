"""End to end: updates POSTed over HTTP to the real web app, the worker answering via the fake Bot API.

The bot runs for real (uvicorn + worker + Redis); only Telegram is a local fake, reached by
python-telegram-bot through TELEGRAM_API_URL.
"""
from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from core.messages import InboundMessage, Option, Progress, Reply, ReplyKind
from tests.support.fake_telegram import (
    BOT_ID,
    BOT_USERNAME,
    TOKEN,
    FakeTelegram,
    callback_update,
    group_chat,
    message_update,
    parse_html,
)
from tests.support.stack import running_bot

SECRET = "test_secret-0123456789abcdefABCDEF"
WEBHOOK = "/telegram/webhook"
GROUP = -100200300
BOT_USER = {"id": BOT_ID, "is_bot": True, "first_name": "Copilot", "username": BOT_USERNAME}
MENTION = f"@{BOT_USERNAME}"


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
def tg_settings(make_settings: Any, tg: FakeTelegram) -> Callable[..., Any]:
    def build(**overrides: Any) -> Any:
        values = {
            "telegram_bot_token": TOKEN,
            "telegram_api_url": tg.api_url,
            "telegram_webhook_url": "https://bot.example.com/telegram/webhook",
            "telegram_webhook_secret": SECRET,
            "allow_public": True,  # these tests are about the adapter: any Telegram user may ask, on purpose
        }
        values.update(overrides)
        return make_settings(**values)

    return build


async def post(stack: Any, update: Any, *, secret: str | None = SECRET, content_type: str = "application/json") -> httpx.Response:
    headers = {"content-type": content_type}
    if secret is not None:
        headers["x-telegram-bot-api-secret-token"] = secret
    body = update if isinstance(update, bytes) else __import__("json").dumps(update).encode()
    async with httpx.AsyncClient(base_url=stack.base_url) as client:
        return await client.post(WEBHOOK, content=body, headers=headers)


async def queued(stack: Any) -> int:
    return await stack.redis.xlen(stack.keys.jobs)


def final_messages(tg: FakeTelegram, chat_id: int) -> list[str]:
    return [tg.visible(m) for m in tg.chat_messages(chat_id)]


class Scripted:
    """A stand-in for the conversation core: answers with whatever the test needs."""

    def __init__(self, answer: Callable[[InboundMessage], Reply] | None = None) -> None:
        self.seen: list[InboundMessage] = []
        self._answer = answer or (lambda m: Reply(ReplyKind.ANSWER, f"You asked: **{m.text}**", "en"))
        self.gates: dict[str, asyncio.Event] = {}

    async def handle(self, message: InboundMessage, progress: Any) -> Reply:
        self.seen.append(message)
        await progress(Progress("Researching…"))
        gate = self.gates.get(message.text)
        if gate is not None:
            await gate.wait()
        return self._answer(message)


# --- the webhook -----------------------------------------------------------------------------------


async def test_setwebhook_at_start_with_the_secret(tg: FakeTelegram, tg_settings: Any) -> None:
    async with running_bot(tg_settings(), Scripted()):
        assert tg.webhook == {
            "url": "https://bot.example.com/telegram/webhook",
            "secret_token": SECRET,
            "allowed_updates": ["message", "callback_query"],
        }
        assert tg.calls_to("getMe")


async def test_a_dm_gets_one_answer(tg: FakeTelegram, tg_settings: Any) -> None:
    async with running_bot(tg_settings()) as stack:  # the real conversation core, offline triage
        response = await post(stack, message_update("vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup, why?"))
        assert response.status_code == 200
        await stack.wait_idle()
    [answer] = final_messages(tg, 42)
    assert "went wrong" not in answer and "0.9.1" in answer and "0.11.0" in answer
    assert tg.calls_to("sendChatAction") and tg.calls_to("sendMessageDraft")
    [sent] = tg.calls_to("sendMessage")
    parse_html(sent.params["text"])


async def test_group_message_without_mention_is_ignored_and_with_mention_answered(tg: FakeTelegram, tg_settings: Any) -> None:
    conversation = Scripted()
    async with running_bot(tg_settings(), conversation) as stack:
        assert (await post(stack, message_update("anyone tried vllm on NPU?", chat=group_chat(GROUP)))).status_code == 200
        assert await queued(stack) == 0
        mentioned = message_update(f"{MENTION} how to enable graph mode?", chat=group_chat(GROUP), mention=MENTION, message_id=31)
        assert (await post(stack, mentioned)).status_code == 200
        await stack.wait_idle()
    assert [m.text for m in conversation.seen] == ["how to enable graph mode?"]
    assert final_messages(tg, GROUP) == ["You asked: how to enable graph mode?"]
    first = tg.calls_to("sendMessage")[0]
    assert first.params["reply_parameters"]["message_id"] == 31
    assert not tg.calls_to("sendMessageDraft")


async def test_a_reply_to_the_bot_is_answered(tg: FakeTelegram, tg_settings: Any) -> None:
    conversation = Scripted()
    bots = {"message_id": 900, "date": 0, "chat": group_chat(GROUP), "from": BOT_USER, "text": "Which project?"}
    async with running_bot(tg_settings(), conversation) as stack:
        await post(stack, message_update("vllm-ascend please", chat=group_chat(GROUP), reply_to=bots))
        await stack.wait_idle()
    assert [m.text for m in conversation.seen] == ["vllm-ascend please"]
    assert final_messages(tg, GROUP) == ["You asked: vllm-ascend please"]


async def test_the_same_update_twice_is_answered_once(tg: FakeTelegram, tg_settings: Any) -> None:
    conversation = Scripted()
    update = message_update("what is MindIE-Turbo?", update_id=123_456)
    async with running_bot(tg_settings(), conversation) as stack:
        assert (await post(stack, update)).status_code == 200
        assert (await post(stack, update)).status_code == 200  # Telegram's retry
        await stack.wait_idle()
    assert len(conversation.seen) == 1
    assert final_messages(tg, 42) == ["You asked: what is MindIE-Turbo?"]


async def test_a_delivered_job_leaves_exactly_one_delivery_record(tg: FakeTelegram, tg_settings: Any) -> None:
    """The adapters' record (placeholder, parts) also carries the worker's "finished" mark: before, the
    worker kept a second key of its own per job. A re-run of the job then only acknowledges it."""
    async with running_bot(tg_settings(), Scripted()) as stack:
        assert (await post(stack, message_update("one record please"))).status_code == 200
        await stack.wait_idle()
        records = [k.decode() async for k in stack.redis.scan_iter(match="*delivery*", count=1000)
                   if stack.keys.prefix in k.decode()]
        assert len(records) == 1, records
        record = await stack.redis.hgetall(records[0])
        [answer] = tg.chat_messages(42)
        assert record[b"finished"] == str(answer.message_id).encode()
        assert record[b"part:0"] == record[b"finished"]  # the engine's parts and the mark, in one hash
        assert 0 < await stack.redis.ttl(records[0]) <= stack.components.settings.dedupe_ttl_seconds
    assert len(final_messages(tg, 42)) == 1


@pytest.mark.parametrize("secret", [None, "", "wrong", SECRET[:-1], SECRET + "x"])
async def test_wrong_or_missing_secret_is_403_and_nothing_is_enqueued(tg: FakeTelegram, tg_settings: Any, secret: str | None) -> None:
    async with running_bot(tg_settings(), Scripted(), worker=False) as stack:
        response = await post(stack, message_update("hello"), secret=secret)
        assert response.status_code == 403
        assert await queued(stack) == 0


def _dm(**changes: Any) -> bytes:
    """A private message update with some fields replaced (None removes one)."""
    message: dict[str, Any] = {"message_id": 3, "date": 1, "chat": {"id": 42, "type": "private"},
                               "from": {"id": 42, "is_bot": False, "first_name": "U"}, "text": "hello"}
    message.update(changes)
    return json.dumps({"update_id": 1, "message": {k: v for k, v in message.items() if v is not None}}).encode()


@pytest.mark.parametrize(
    ("body", "content_type", "status"),
    [
        (b"not json", "application/json", 400),
        (b'{"update_id": 1', "application/json", 400),
        (b"[1, 2]", "application/json", 400),
        (b'{"message": {}}', "application/json", 400),
        (b'{"update_id": "7"}', "application/json", 400),
        (b'{"update_id": 1, "message": {"chat": 5}}', "application/json", 400),
        (b"\xff\xfe\x00garbage", "application/json", 400),
        (b"[" * 100_000, "application/json", 400),  # RecursionError in json.loads was a 500
        (b'{"update_id": 1, "message": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_001, "application/json", 400),
        (b'{"update_id": 1}', "text/plain", 400),
        (b'{"update_id": 1}', "application/x-www-form-urlencoded", 400),
        # fields of the wrong type, read from the JSON itself (no python-telegram-bot objects on the ack path)
        (_dm(chat={"id": "42", "type": "private"}), "application/json", 400),
        (_dm(**{"from": "someone"}), "application/json", 400),
        (_dm(text=["not", "text"]), "application/json", 400),
        (_dm(entities={"type": "mention"}), "application/json", 400),
        (_dm(entities=[{"type": "mention", "offset": "0", "length": 3}]), "application/json", 400),
        (_dm(message_id=None), "application/json", 400),
        (b'{"update_id": 1, "callback_query": "press"}', "application/json", 400),
        (b'{"update_id": 1, "callback_query": {"id": "q1", "data": "c:t:0"}}', "application/json", 400),
        (b'{"update_id": 99}', "application/json; charset=utf-8", 200),  # an update type we ignore
    ],
)
async def test_only_json_updates_are_accepted(tg: FakeTelegram, tg_settings: Any, body: bytes, content_type: str, status: int) -> None:
    async with running_bot(tg_settings(), Scripted(), worker=False) as stack:
        response = await post(stack, body, content_type=content_type)
        assert response.status_code == status
        assert await queued(stack) == 0


async def test_polling_mode_has_no_webhook_route(tg: FakeTelegram, tg_settings: Any) -> None:
    async with running_bot(tg_settings(telegram_webhook_url=None), Scripted(), worker=False) as stack:
        response = await post(stack, message_update("hello"))
        assert response.status_code in (404, 405)


# --- clarification ---------------------------------------------------------------------------------

OPTIONS = (
    Option("vllm", "vLLM (upstream)", "vllm-project/vllm"),
    Option("vllm-ascend", "vllm-ascend (Ascend plugin)", "vllm-project/vllm-ascend"),
)


def clarifying(message: InboundMessage) -> Reply:
    if message.choice is not None or message.text.strip() in ("1", "2"):
        chosen = message.choice or OPTIONS[int(message.text) - 1].key
        return Reply(ReplyKind.ANSWER, f"Answer for **{chosen}**.", "en")
    return Reply(ReplyKind.CLARIFY, "Which project?\n\n1. vLLM (upstream)\n2. vllm-ascend (Ascend plugin)", "en", options=OPTIONS)


def keyboard_message(tg: FakeTelegram, chat_id: int) -> tuple[dict[str, Any], list[str]]:
    stored = next(m for m in tg.chat_messages(chat_id) if m.reply_markup)
    data = [row[0]["callback_data"] for row in stored.reply_markup["inline_keyboard"]]
    as_json = {"message_id": stored.message_id, "date": 0, "chat": group_chat(chat_id) if chat_id < 0 else
               {"id": chat_id, "type": "private", "first_name": "Ada"}, "from": BOT_USER, "text": tg.visible(stored)}
    return as_json, data


async def test_clarification_by_button(tg: FakeTelegram, tg_settings: Any) -> None:
    conversation = Scripted(clarifying)
    async with running_bot(tg_settings(), conversation) as stack:
        await post(stack, message_update("vllm on NPU is slow"))
        await stack.wait_idle()
        message, data = keyboard_message(tg, 42)
        assert all(len(d.encode()) <= 64 for d in data)

        press = callback_update(data[1], message=message)
        assert (await post(stack, press)).status_code == 200
        await stack.wait_idle()
        await tg.wait_for(lambda: tg.calls_to("answerCallbackQuery") and tg.calls_to("editMessageReplyMarkup"))

        # a second press on the same keyboard (or by someone else) does not answer twice
        again = callback_update(data[0], message=message)
        assert (await post(stack, again)).status_code == 200
        await stack.wait_idle()
        await tg.wait_for(lambda: len(tg.calls_to("answerCallbackQuery")) == 2)

    choice = conversation.seen[1]
    assert (choice.choice, choice.text, choice.thread) == ("vllm-ascend", "vllm-ascend (Ascend plugin)", "42")
    assert len(conversation.seen) == 2
    assert final_messages(tg, 42)[-1] == "Answer for vllm-ascend."
    answered = [c.params["callback_query_id"] for c in tg.calls_to("answerCallbackQuery")]
    assert answered == [press["callback_query"]["id"], again["callback_query"]["id"]]


async def test_every_callback_is_answered_even_unknown_or_expired(tg: FakeTelegram, tg_settings: Any) -> None:
    message = {"message_id": 5, "date": 0, "chat": {"id": 42, "type": "private", "first_name": "A"}, "from": BOT_USER, "text": "?"}
    async with running_bot(tg_settings(), Scripted(), worker=False) as stack:
        for data in ("c:expiredtoken:0", "garbage", "c:x:notanumber"):
            assert (await post(stack, callback_update(data, message=message))).status_code == 200
        await tg.wait_for(lambda: len(tg.calls_to("answerCallbackQuery")) == 3)
        assert await queued(stack) == 0
    assert all(c.params.get("show_alert") is True for c in tg.calls_to("answerCallbackQuery"))


async def test_clarification_by_typed_reply_in_a_group(tg: FakeTelegram, tg_settings: Any) -> None:
    conversation = Scripted(clarifying)
    async with running_bot(tg_settings(), conversation) as stack:
        await post(stack, message_update(f"{MENTION} vllm on NPU is slow", chat=group_chat(GROUP), mention=MENTION))
        await stack.wait_idle()
        message, _ = keyboard_message(tg, GROUP)
        await post(stack, message_update("2", chat=group_chat(GROUP), reply_to=message))
        await stack.wait_idle()
    assert [m.text for m in conversation.seen] == ["vllm on NPU is slow", "2"]
    assert final_messages(tg, GROUP)[-1] == "Answer for vllm-ascend."


async def test_real_core_clarifies_with_buttons_and_resumes_on_press(tg: FakeTelegram, tg_settings: Any) -> None:
    async with running_bot(tg_settings()) as stack:  # the real conversation core, offline triage
        await post(stack, message_update("MindIE 报错了，说找不到符号，怎么排查？"))
        await stack.wait_idle()
        message, data = keyboard_message(tg, 42)
        assert len(data) >= 2 and all(len(d.encode()) <= 64 for d in data)
        await post(stack, callback_update(data[0], message=message))
        await stack.wait_idle()
        await tg.wait_for(lambda: tg.calls_to("answerCallbackQuery"))
    clarification, answer = final_messages(tg, 42)
    assert "1." in clarification and "MindIE-LLM" in clarification
    assert "过期" not in answer and "MindIE" in answer
    assert not tg.chat_messages(42)[0].reply_markup  # the used keyboard is gone


async def test_real_core_resumes_on_a_typed_choice(tg: FakeTelegram, tg_settings: Any) -> None:
    async with running_bot(tg_settings()) as stack:
        await post(stack, message_update("EZ9999 inner error right after the process starts, what now?"))
        await stack.wait_idle()
        keyboard_message(tg, 42)  # asked with buttons …
        await post(stack, message_update("1"))  # … answered by typing
        await stack.wait_idle()
    clarification, answer = final_messages(tg, 42)
    assert "vllm-ascend" in clarification
    assert "expired" not in answer and "Which" not in answer and answer != clarification


# --- long answers, refusals, limits ---------------------------------------------------------------


def long_answer(_: InboundMessage) -> Reply:
    parts = []
    for n in range(12):
        parts.append(f"### Step {n}\nCheck `npu-smi info` & **restart** the <service>.")
        parts.append("```python\n" + "\n".join(f"engine.step({n}, {i})  # a < b" for i in range(30)) + "\n```")
    text = "\n\n".join(parts)
    assert len(text) >= 10_000
    return Reply(ReplyKind.ANSWER, text, "en")


async def test_a_ten_thousand_character_answer_is_split_correctly(tg: FakeTelegram, tg_settings: Any) -> None:
    async with running_bot(tg_settings(), Scripted(long_answer)) as stack:
        await post(stack, message_update(f"{MENTION} long please", chat=group_chat(GROUP), mention=MENTION))
        await stack.wait_idle()
    stored = tg.chat_messages(GROUP)
    assert len(stored) >= 3
    visible = "".join(tg.visible(m) for m in stored)
    for m in stored:
        assert len(tg.visible(m)) <= 4096 and m.text.count("<pre>") == m.text.count("</pre>")
    for n in range(12):
        assert f"Step {n}" in visible and f"engine.step({n}, 29)  # a < b" in visible
    assert "⏳" not in visible  # the placeholder became the first chunk


async def test_telegram_refusing_the_html_once_gets_plain_text(tg: FakeTelegram, tg_settings: Any) -> None:
    tg.fail_next("sendMessage", 400, "Bad Request: can't parse entities: can't find end tag corresponding to start tag \"b\"")
    async with running_bot(tg_settings(), Scripted()) as stack:
        await post(stack, message_update("plain please"))
        await stack.wait_idle()
    html_try, plain = tg.calls_to("sendMessage")
    assert html_try.params["parse_mode"] == "HTML" and "parse_mode" not in plain.params
    assert final_messages(tg, 42) == ["You asked: plain please"]


async def test_a_429_with_retry_after_still_delivers(tg: FakeTelegram, tg_settings: Any) -> None:
    tg.fail_next("sendMessage", 429, "Too Many Requests: retry after 1", {"retry_after": 1})
    async with running_bot(tg_settings(), Scripted()) as stack:
        await post(stack, message_update("rate limited?"))
        await stack.wait_idle()
    assert len(tg.calls_to("sendMessage")) == 2
    assert final_messages(tg, 42) == ["You asked: rate limited?"]


async def test_a_user_who_blocked_the_bot_does_not_stop_the_others(tg: FakeTelegram, tg_settings: Any) -> None:
    blocked = 77
    for method in ("sendMessage", "sendChatAction", "sendMessageDraft"):
        tg.fail_next(method, 403, "Forbidden: bot was blocked by the user", when=lambda p: p["chat_id"] == blocked, times=100)
    async with running_bot(tg_settings(), Scripted()) as stack:
        blocked_chat = {"id": blocked, "type": "private", "first_name": "Gone"}
        await post(stack, message_update("hello?", chat=blocked_chat, sender={"id": blocked, "is_bot": False, "first_name": "Gone"}))
        await post(stack, message_update("still here"))
        await stack.wait_idle()
        pending = await stack.redis.xpending(stack.keys.jobs, "workers")
    assert pending["pending"] == 0  # both jobs acked, none left to retry
    assert final_messages(tg, 42) == ["You asked: still here"]
    assert not tg.chat_messages(blocked)


async def test_one_slow_question_never_blocks_another_chat(tg: FakeTelegram, tg_settings: Any) -> None:
    conversation = Scripted()
    conversation.gates["slow one"] = asyncio.Event()
    async with running_bot(tg_settings(), conversation) as stack:
        await post(stack, message_update("slow one", chat={"id": 50, "type": "private", "first_name": "A"},
                                         sender={"id": 50, "is_bot": False, "first_name": "A"}))
        await post(stack, message_update("quick one"))
        await tg.wait_for(lambda: final_messages(tg, 42) == ["You asked: quick one"])
        assert final_messages(tg, 50) == []  # still researching
        conversation.gates["slow one"].set()
        await stack.wait_idle()
    assert final_messages(tg, 50) == ["You asked: slow one"]


async def test_the_token_never_reaches_a_log_line(tg: FakeTelegram, tg_settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    tg.fail_next("sendMessage", 400, "Bad Request: can't parse entities: x")
    async with running_bot(tg_settings(), Scripted()) as stack:
        await post(stack, message_update("log check"))
        await stack.wait_idle()
    assert any("sendMessage" in r.getMessage() for r in caplog.records)  # requests were logged …
    secret_part = TOKEN.split(":", 1)[1]
    assert not [r.getMessage() for r in caplog.records if secret_part in r.getMessage()]  # … without the token


# --- long polling ----------------------------------------------------------------------------------


async def test_long_polling_when_no_webhook_url_is_set(tg: FakeTelegram, tg_settings: Any) -> None:
    tg.webhook = {"url": "https://old.example.com/hook"}  # left over from an earlier deployment
    conversation = Scripted()
    async with running_bot(tg_settings(telegram_webhook_url=None), conversation) as stack:
        first = tg.push_update(message_update("polled question"))
        tg.push_update(first)  # delivered again: deduplicated by update_id
        await tg.wait_for(lambda: final_messages(tg, 42) == ["You asked: polled question"])
        await stack.wait_idle()
        await tg.wait_for(lambda: any(int(c.params.get("offset") or 0) > first["update_id"] for c in tg.calls_to("getUpdates")))
    assert tg.calls_to("deleteWebhook") and tg.webhook is None
    assert not tg.calls_to("setWebhook")
    assert [m.text for m in conversation.seen] == ["polled question"]


async def test_redis_down_gives_503_so_telegram_retries(
    tg: FakeTelegram, tg_settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from redis.exceptions import ConnectionError as RedisConnectionError

    async with running_bot(tg_settings(), Scripted(), worker=False) as stack:
        adapter = stack.components.adapters["telegram"]

        async def down(*_: Any, **__: Any) -> Any:
            raise RedisConnectionError("connection refused")

        # simulate the outage at the ingress (a frozen dataclass: patched on the class, undone after the test)
        monkeypatch.setattr(type(adapter._ingress), "submit", down)  # noqa: SLF001
        response = await post(stack, message_update("while redis is down"))
        assert response.status_code == 503


async def test_bot_api_unreachable_at_first_gives_503_then_recovers(tg: FakeTelegram, tg_settings: Any) -> None:
    tg.fail_next("getMe", 502, "Bad Gateway", times=2)  # start() and the first webhook call
    conversation = Scripted()
    async with running_bot(tg_settings(), conversation) as stack:
        assert (await post(stack, message_update("first try"))).status_code == 503
        assert (await post(stack, message_update("second try"))).status_code == 200
        await stack.wait_idle()
    assert final_messages(tg, 42) == ["You asked: second try"]


async def test_an_oversized_body_is_refused_even_without_a_content_length(tg: FakeTelegram, tg_settings: Any) -> None:
    huge = b'{"update_id": 5, "pad": "' + b"x" * 1_100_000 + b'"}'

    async def chunks():  # chunked upload: the cap must hold while reading, not only on the header
        for start in range(0, len(huge), 64_000):
            yield huge[start : start + 64_000]

    async with running_bot(tg_settings(), Scripted(), worker=False) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url) as client:
            declared = await client.post(WEBHOOK, content=huge, headers={
                "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET})
            chunked = await client.post(WEBHOOK, content=chunks(), headers={
                "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET})
        assert (declared.status_code, chunked.status_code) == (413, 413)
        assert await queued(stack) == 0
