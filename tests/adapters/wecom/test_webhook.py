"""API mode end to end: encrypted, signed callbacks POSTed over HTTP to the real web app,
the worker answering, the reply pulled by WeCom-style refresh callbacks (and `response_url`
where the bubble cannot hold it). The core is the real one (offline triage, deterministic)
unless a case needs a specific answer: then a scripted conversation stands in for it.
"""
from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from adapters.wecom.crypto import WeComCrypto, signature
from core.messages import InboundMessage, Reply, ReplyKind
from tests.support.fake_wecom import (
    FakeQyapi,
    Scripted,
    WeComCallbackClient,
    event_body,
    message_body,
)
from tests.support.stack import running_bot, jobs_enqueued

TOKEN = "wecom-e2e-token"
AES = "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"
LIMIT = 20_480


@pytest.fixture
async def qyapi() -> AsyncIterator[FakeQyapi]:
    async with FakeQyapi() as fake:
        yield fake


@pytest.fixture
def settings(make_settings: Callable, qyapi: FakeQyapi) -> Callable[..., Any]:
    def build(**overrides: Any) -> Any:
        values: dict[str, Any] = dict(
            wecom_token=TOKEN, wecom_encoding_aes_key=AES, wecom_bot_id="BOT1", wecom_api_url=qyapi.url,
            allowed_workspaces=["wecom:BOT1"],  # this in-house bot, whoever reaches it
        )
        values.update(overrides)
        return make_settings(**values)

    return build


def client(stack: Any) -> WeComCallbackClient:
    return WeComCallbackClient(stack.base_url, TOKEN, AES)


async def queued(stack: Any) -> int:
    return await stack.redis.xlen(stack.keys.jobs)


def answer(text: str, **kw: Any) -> Callable[[InboundMessage], Reply]:
    return lambda m: Reply(ReplyKind.ANSWER, text, "en", **kw)


# --- URL verification ---------------------------------------------------------------------


async def test_url_verification_with_wecoms_official_sample(settings) -> None:
    official = settings(wecom_token="QDG6eK", wecom_encoding_aes_key="jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C",
                        wecom_receive_id="wx5823bf96d3bd56c7", wecom_max_clock_skew_seconds=0)
    params = {"msg_signature": "5c45ff5e21c57e6ad56bac8758b79b1d9ac89fd3", "timestamp": "1409659589",
              "nonce": "263014780",
              "echostr": "P9nAzCzyDtyTWESHep1vC5X9xho/qYX3Zpb4yKa9SKld1DsH3Iyt3tP3zNdtp+4RPcs8TgAE7OaBO+FZXvnaqQ=="}
    async with running_bot(official, worker=False) as stack, httpx.AsyncClient() as http:
        ok = await http.get(f"{stack.base_url}/wecom/callback", params=params)
        assert ok.status_code == 200 and ok.content == b"1616140317555161061"  # no quotes, BOM or newline
        bad = await http.get(f"{stack.base_url}/wecom/callback", params={**params, "nonce": "1"})
        assert bad.status_code == 403
        missing = await http.get(f"{stack.base_url}/wecom/callback", params={"echostr": params["echostr"]})
        assert missing.status_code == 400


async def test_url_verification_for_an_ai_bot_and_the_timestamp_window(settings) -> None:
    async with running_bot(settings(), worker=False) as stack, httpx.AsyncClient() as http:
        crypto = WeComCrypto(TOKEN, AES, "")
        echo = crypto.encrypt(b"8474938261")
        ts = str(int(time.time()))
        params = {"msg_signature": signature(TOKEN, ts, "n1", echo), "timestamp": ts, "nonce": "n1", "echostr": echo}
        ok = await http.get(f"{stack.base_url}/wecom/callback", params=params)
        assert ok.status_code == 200 and ok.content == b"8474938261"
        old = str(int(time.time()) - 3600)
        stale = {**params, "timestamp": old, "msg_signature": signature(TOKEN, old, "n1", echo)}
        assert (await http.get(f"{stack.base_url}/wecom/callback", params=stale)).status_code == 403


# --- answers through the stream -----------------------------------------------------------


async def test_group_mention_gets_one_answer_through_the_stream(settings, qyapi) -> None:
    gate = asyncio.Event()
    scripted = Scripted(answer("Set `enable_graph_mode` in vllm-ascend's additional_config. @all"),
                        progress=("Searching DeepWiki for vllm-ascend…",), gate=gate)
    async with running_bot(settings(), conversation=scripted) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("@AscendBot how do I turn on graph mode?", chat_id="wrkGROUP1",
                                              msgid="msg-g1"))
        assert first.status == 200 and first.reply is not None
        stream = first.reply["stream"]
        sid = stream["id"]
        assert first.reply["msgtype"] == "stream" and stream["feedback"] == {"id": sid}
        assert stream["finish"] is False and "Researching" in stream["content"]

        await asyncio.wait_for(scripted.progressed.wait(), 15)
        during = await wecom.refresh(sid)  # any replica answers from Redis: the progress shows
        assert during.reply is not None and during.reply["stream"]["finish"] is False
        assert "Searching DeepWiki for vllm-ascend" in during.reply["stream"]["content"]

        gate.set()
        replies = await wecom.refresh_until_finished(sid, stack.wait_idle)
        final = replies[-1]["stream"]
        assert final["id"] == sid and final["finish"] is True
        assert final["content"] == "Set `enable_graph_mode` in vllm-ascend's additional_config. @\u200ball"
        assert [r["stream"]["finish"] for r in replies].count(True) == 1
    (seen,) = scripted.messages
    assert (seen.text, seen.channel, seen.thread, seen.is_direct) == (
        "how do I turn on graph mode?", "wrkGROUP1", "wrkGROUP1", False)
    assert qyapi.accepted == []  # everything fit in the bubble


async def test_single_chat_is_answered_by_the_real_core(settings) -> None:
    async with running_bot(settings()) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup", user="lisi"))
        sid = first.reply["stream"]["id"]  # type: ignore[index]
        replies = await wecom.refresh_until_finished(sid, stack.wait_idle)
        content = replies[-1]["stream"]["content"]
        assert "vllm-ascend" in content and "Researching" not in content
        assert len(content.encode()) <= LIMIT
        session_keys = [k async for k in stack.redis.scan_iter(match=f"{stack.keys.prefix}:session:*")]
        assert session_keys  # the conversation (keyed by the user id) was remembered


async def test_the_same_msgid_twice_gets_one_answer(settings) -> None:
    scripted = Scripted(answer("Only once."))
    async with running_bot(settings(), conversation=scripted) as stack:
        wecom = client(stack)
        body = message_body("@Bot what is MindIE-Turbo?", chat_id="grp", msgid="dup-1")
        a = await wecom.post(body)
        b = await wecom.post(body)  # WeCom retried: same bubble, no second job
        assert a.reply["stream"]["id"] == b.reply["stream"]["id"]  # type: ignore[index]
        await stack.wait_idle()
        assert jobs_enqueued(stack.components) == 1
        replies = await wecom.refresh_until_finished(a.reply["stream"]["id"], stack.wait_idle)  # type: ignore[index]
        assert replies[-1]["stream"]["content"] == "Only once."
    assert len(scripted.messages) == 1


async def test_bad_signature_wrong_receive_id_and_bad_input_are_rejected(settings) -> None:
    async with running_bot(settings(), worker=False) as stack:
        wecom = client(stack)
        params, body = wecom.seal(message_body("hi", msgid="rej-1"))
        forged = await wecom.post_raw({**params, "msg_signature": "0" * 40}, body)
        assert forged.status == 403
        other_rid = WeComCrypto(TOKEN, AES, "wx-some-corp")
        wrong_rid = await wecom.post(message_body("hi", msgid="rej-2"), crypto=other_rid)
        assert wrong_rid.status == 403
        other_key = WeComCrypto(TOKEN, "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C", "")
        assert (await wecom.post(message_body("hi", msgid="rej-3"), crypto=other_key)).status == 403
        stale = await wecom.post(message_body("hi", msgid="rej-4"), timestamp="1409659813")
        assert stale.status == 403
        assert (await wecom.post_raw(params, b"not json")).status == 400
        assert (await wecom.post_raw(params, b"\xff\xfe\x00garbage")).status == 400
        assert (await wecom.post_raw(params, b"{" + b" " * 300_000 + b"}")).status == 413
        async def chunks():  # chunked, no Content-Length: the cap holds while reading
            for _ in range(8):
                yield b" " * 64 * 1024

        async with httpx.AsyncClient() as http:
            chunked = await http.post(f"{stack.base_url}/wecom/callback", params=params, content=chunks())
        assert chunked.status_code == 413
        assert (await wecom.post_raw(params, b'{"encrypt": 5}')).status == 400
        assert (await wecom.post_raw({}, body)).status == 400
        # signed and encrypted correctly, but not a JSON callback inside
        enc = wecom.crypto.encrypt(b"\xff\xfe not json")
        ts, nonce = params["timestamp"], params["nonce"]
        inner = await wecom.post_raw({"msg_signature": signature(TOKEN, ts, nonce, enc), "timestamp": ts,
                                      "nonce": nonce}, json.dumps({"encrypt": enc}).encode())
        assert inner.status == 400
        assert (await wecom.post({"msgid": "m", "msgtype": "text", "text": {"content": "no sender"}})).status == 400
        assert await queued(stack) == 0  # nothing enqueued


async def test_image_only_message_and_enter_chat_are_answered_at_once(settings) -> None:
    async with running_bot(settings(), worker=False) as stack:
        wecom = client(stack)
        image = message_body("", user="lisi")
        image["msgtype"], image["image"] = "image", {"url": "https://example/x.png"}
        r = await wecom.post(image)
        assert r.reply["stream"]["finish"] is True and "text" in r.reply["stream"]["content"]  # type: ignore[index]
        welcome = await wecom.post(event_body("enter_chat"))
        assert welcome.reply["msgtype"] == "text" and "vllm-ascend" in welcome.reply["text"]["content"]  # type: ignore[index]
        assert await queued(stack) == 0


# --- clarification --------------------------------------------------------------------------


async def test_clarification_by_card_button_resumes_the_question(settings, qyapi) -> None:
    async with running_bot(settings()) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("@AscendBot torch_npu 报错 EZ9999 之后进程退出",
                                              chat_id="grpC", msgid="c-1", code="RC-ASK"))
        replies = await wecom.refresh_until_finished(first.reply["stream"]["id"], stack.wait_idle)  # type: ignore[index]
        final = replies[-1]
        assert final["msgtype"] == "stream_with_template_card"
        card = final["template_card"]
        assert card["card_type"] == "button_interaction" and "1." in final["stream"]["content"]
        key = next(b["key"] for b in card["button_list"] if "ascend" in b["key"].lower())

        click = await wecom.post(event_body("template_card_event", {"card_type": "button_interaction",
                                                                    "event_key": key, "task_id": card["task_id"]},
                                            chat_id="grpC", code="RC-CLICK"))
        assert click.reply is not None and click.reply["response_type"] == "update_template_card"
        assert click.reply["template_card"]["task_id"] == card["task_id"]
        again = await wecom.post(event_body("template_card_event", {"event_key": key, "task_id": card["task_id"]},
                                            chat_id="grpC", code="RC-CLICK2"))
        assert again.status == 200 and again.reply is None  # one card resolves one question
        await stack.wait_idle()
    (delivered,) = qyapi.accepted
    assert delivered["code"] == "RC-CLICK" and delivered["msgtype"] == "markdown"
    assert "vllm-ascend" in delivered["markdown"]["content"]


async def test_clarification_by_typed_number_resumes_the_question(settings) -> None:
    async with running_bot(settings()) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("@AscendBot MindIE 报错 507015，怎么排查？", chat_id="grpT"))
        asked = (await wecom.refresh_until_finished(first.reply["stream"]["id"], stack.wait_idle))[-1]  # type: ignore[index]
        lines = asked["stream"]["content"].splitlines()
        pick = next(line.split(".")[0] for line in lines if "MindIE-LLM" in line and line[:1].isdigit())
        second = await wecom.post(message_body(f"@AscendBot {pick}", chat_id="grpT"))
        answered = (await wecom.refresh_until_finished(second.reply["stream"]["id"], stack.wait_idle))[-1]  # type: ignore[index]
        assert answered["msgtype"] == "stream"
        assert "507015" in answered["stream"]["content"]  # the original question, not "1"


# --- limits and time ------------------------------------------------------------------------


@pytest.mark.parametrize("sections", [30, 120])  # ~ 30 KB: bubble + one message; ~ 120 KB: cut with a note
async def test_an_answer_over_20480_bytes_is_split_between_bubble_and_response_url(settings, qyapi, sections):
    paragraph = "昇腾 vllm-ascend 图模式的配置说明，包括 additional_config 的每个字段。" * 10
    long_text = "\n\n".join(f"## 第{i}节\n{paragraph}" for i in range(sections))
    scripted = Scripted(lambda m: Reply(ReplyKind.ANSWER, long_text, "zh"))
    async with running_bot(settings(), conversation=scripted) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("@Bot 图模式所有配置项？", chat_id="grpL", code="RC-LONG"))
        final = (await wecom.refresh_until_finished(first.reply["stream"]["id"], stack.wait_idle))[-1]  # type: ignore[index]
        await stack.wait_idle()
    bubble = final["stream"]["content"]
    assert len(bubble.encode()) <= LIMIT and bubble.startswith("## 第0节") and bubble.endswith("（未完，见下一条）")
    (rest,) = qyapi.accepted  # a response_url works once: everything after the bubble is one message
    assert rest["code"] == "RC-LONG"
    continued = rest["markdown"]["content"]
    assert len(continued.encode()) <= LIMIT
    cut = bubble.removesuffix("\n\n（未完，见下一条）")
    squeeze = lambda text: re.sub(r"\s+", "", text)  # noqa: E731 - cuts drop the blank line they fall on
    if len(long_text.encode()) < 2 * LIMIT - 100:
        assert squeeze(cut + continued) == squeeze(long_text)  # nothing lost, nothing repeated
    else:
        assert continued.endswith("（回答过长，已截断）") and len(continued.encode()) > LIMIT - 2000
        assert squeeze(long_text).startswith(squeeze(cut + continued.removesuffix("（回答过长，已截断）")))


async def test_a_job_longer_than_the_stream_window_finishes_with_a_note_and_uses_response_url(settings, qyapi):
    gate = asyncio.Event()
    scripted = Scripted(answer("msModelSlim W8A8: calibrate with 128 samples.", trace_id="tr-late"), gate=gate)
    async with running_bot(settings(wecom_stream_window_seconds=0.5), conversation=scripted) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("@Bot explain W8A8 calibration", chat_id="grpW", code="RC-LATE"))
        sid = first.reply["stream"]["id"]  # type: ignore[index]
        await asyncio.wait_for(scripted.progressed.wait(), 15)
        for _ in range(100):  # WeCom keeps refreshing; the window passes while the job still runs
            r = await wecom.refresh(sid)
            if r.reply["stream"]["finish"]:  # type: ignore[index]
                break
            await asyncio.sleep(0.05)
        closed = r.reply["stream"]  # type: ignore[index]
        assert closed["finish"] is True and "Still working" in closed["content"]
        gate.set()
        await stack.wait_idle()
        after = await wecom.refresh(sid)
        assert after.reply["stream"]["content"] == closed["content"]  # type: ignore[index]
    (late,) = qyapi.accepted
    assert late == {"code": "RC-LATE", "msgtype": "markdown",
                    "markdown": {"content": "msModelSlim W8A8: calibrate with 128 samples."}}


# --- feedback ------------------------------------------------------------------------------


async def test_feedback_is_stored_with_the_answer(settings) -> None:
    scripted = Scripted(answer("Use torch_npu 2.5.1.", trace_id="tr-42"))
    async with running_bot(settings(), conversation=scripted) as stack:
        wecom = client(stack)
        first = await wecom.post(message_body("which torch_npu for vllm-ascend 0.9?", user="wangwu"))
        sid = first.reply["stream"]["id"]  # type: ignore[index]
        await wecom.refresh_until_finished(sid, stack.wait_idle)
        fb = await wecom.post(event_body("feedback_event", {"id": sid, "type": 2, "content": "wrong version",
                                                            "inaccurate_reason_list": [1]}, user="wangwu"))
        assert fb.status == 200 and fb.raw == b""
        stored = await stack.redis.hgetall(stack.keys.feedback("tr-42"))
    record = {k.decode(): v.decode() for k, v in stored.items()}
    assert record["answer"] == "Use torch_npu 2.5.1."
    assert json.loads(record["user:wangwu"])["type"] == 2
    assert json.loads(record["user:wangwu"])["content"] == "wrong version"


async def test_redis_down_answers_503_so_wecom_retries(make_settings) -> None:
    import redis.asyncio as aioredis
    from starlette.applications import Starlette

    from adapters.base import AdapterDeps
    from adapters.wecom import create_adapter
    from core.ingress import Ingress
    from core.keys import Keys

    dead = aioredis.Redis.from_url("redis://127.0.0.1:1", socket_connect_timeout=0.5)
    settings = make_settings(wecom_token=TOKEN, wecom_encoding_aes_key=AES)
    adapter = create_adapter(AdapterDeps(settings=settings, redis=dead, ingress=Ingress(dead, Keys("t-dead"), 60)))
    assert adapter is not None
    app = Starlette(routes=adapter.routes())
    wecom = WeComCallbackClient("http://wecom.test", TOKEN, AES)
    params, body = wecom.seal(message_body("@Bot hello", chat_id="grp"))
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://wecom.test") as http:
        r = await http.post("/wecom/callback", params=params, content=body)
        refresh_params, refresh_body = wecom.seal({"msgid": "r", "msgtype": "stream", "stream": {"id": "s1"}})
        r2 = await http.post("/wecom/callback", params=refresh_params, content=refresh_body)
    assert r.status_code == 503 and r2.status_code == 503
    await adapter.stop()
    await dead.aclose()
