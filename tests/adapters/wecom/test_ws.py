"""Long-connection mode against a local fake of WeCom's AI-bot WebSocket server.

The adapter is real (outbox, leader lock, stream state, ingress into Redis); the
worker is played by calling the adapter's responder for the enqueued job.
"""
from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import websockets

from adapters.base import AdapterDeps, PlatformMisconfigured
from adapters.wecom import create_adapter
from adapters.wecom.adapter import WeComAdapter
from core.ingress import Ingress
from core.messages import InboundMessage, Option, Progress, Reply, ReplyKind
from tests.support.fake_wecom import FakeAibotWs, Scripted, event_body, message_body
from tests.support.stack import running_bot

BOT, SECRET = "BOT1", "S3cret-bot"


def ws_settings(make_settings: Any, url: str, **overrides: Any) -> Any:
    values = dict(
        wecom_mode="ws", wecom_bot_id=BOT, wecom_bot_secret=SECRET, wecom_ws_url=url,
        wecom_ws_heartbeat_seconds=0.2, wecom_ws_reconnect_base_seconds=0.05, wecom_ws_reconnect_max_seconds=0.2,
        allowed_workspaces=[f"wecom:{BOT}"],  # this in-house bot, whoever reaches it
    )
    values.update(overrides)
    return make_settings(**values)


def build(settings: Any, redis: Any, keys: Any) -> WeComAdapter:
    adapter = create_adapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
    assert isinstance(adapter, WeComAdapter)
    return adapter


@pytest.fixture
async def fake() -> AsyncIterator[FakeAibotWs]:
    async with FakeAibotWs(BOT, SECRET) as server:
        yield server


async def jobs(redis: Any, keys: Any) -> list[InboundMessage]:
    entries = await redis.xrange(keys.jobs)
    return [InboundMessage.from_json(fields[b"message"]) for _, fields in entries]


async def wait_jobs(redis: Any, keys: Any, count: int) -> list[InboundMessage]:
    async def poll() -> list[InboundMessage]:
        while len(found := await jobs(redis, keys)) < count:
            await asyncio.sleep(0.02)
        return found
    return await asyncio.wait_for(poll(), 15)


def stream_frames(fake: FakeAibotWs, req_id: str) -> list[dict[str, Any]]:
    return [f["body"] for f in fake.replies(req_id) if f.get("cmd") == "aibot_respond_msg"]


def test_create_adapter_needs_the_modes_credentials(make_settings: Any) -> None:
    deps = lambda s: AdapterDeps(settings=s, redis=None, ingress=None)  # noqa: E731
    assert create_adapter(deps(make_settings())) is None
    with pytest.raises(PlatformMisconfigured, match="WECOM_BOT_SECRET"):
        create_adapter(deps(make_settings(wecom_mode="ws", wecom_bot_id="B")))
    with pytest.raises(PlatformMisconfigured, match="WECOM_ENCODING_AES_KEY"):
        create_adapter(deps(make_settings(wecom_token="t")))


async def test_subscribe_heartbeat_and_a_streamed_answer(fake, make_settings, redis, keys) -> None:
    adapter = build(ws_settings(make_settings, fake.url), redis, keys)
    await adapter.start()
    try:
        await fake.wait_subscribed()
        await fake.wait_for(lambda: fake.pings >= 2)  # heartbeats are sent and answered
        assert adapter.routes() == []  # no public URL in this mode

        rid = await fake.push_message(message_body("@AscendBot vllm-ascend 如何开启图模式", chat_id="grp1", msgid="m-1"))
        await fake.wait_for(lambda: len(stream_frames(fake, rid)) >= 1)
        opening = stream_frames(fake, rid)[0]
        sid = opening["stream"]["id"]
        assert opening["stream"]["finish"] is False and opening["stream"]["feedback"] == {"id": sid}

        (job,) = await wait_jobs(redis, keys, 1)
        assert (job.text, job.channel, job.thread, job.event_id) == ("vllm-ascend 如何开启图模式", "grp1", "grp1", "m-1")
        responder = adapter.responder(job, "job-1")
        await responder.progress(Progress("正在检索 vllm-ascend…"))
        # the progress frame is on the wire before the answer (under load the two could otherwise race)
        await fake.wait_for(lambda: any("正在检索 vllm-ascend" in b["stream"]["content"] for b in stream_frames(fake, rid)))
        await responder.finish(Reply(ReplyKind.ANSWER, "在 vllm-ascend 中设置 `enforce_eager=False`。", "zh"))

        await fake.wait_for(lambda: any(b["stream"]["finish"] for b in stream_frames(fake, rid)))
        frames = stream_frames(fake, rid)
        assert {b["stream"]["id"] for b in frames} == {sid}
        assert [b["stream"]["finish"] for b in frames].count(True) == 1 and frames[-1]["stream"]["finish"]
        assert "正在检索 vllm-ascend" in frames[1]["stream"]["content"]
        assert frames[-1]["stream"]["content"] == "在 vllm-ascend 中设置 `enforce_eager=False`。"
    finally:
        await adapter.stop()


async def test_drop_mid_answer_reconnects_and_the_answer_arrives_once(fake, make_settings, redis, keys) -> None:
    adapter = build(ws_settings(make_settings, fake.url), redis, keys)
    await adapter.start()
    try:
        rid = await fake.push_message(message_body("how to deploy MindIE-LLM?", msgid="m-drop"))
        (job,) = await wait_jobs(redis, keys, 1)
        await fake.wait_for(lambda: len(stream_frames(fake, rid)) >= 1)
        # the next frame from the client (the progress update) kills the socket instead of being acked
        fake.drop_when = lambda f: f.get("cmd") == "aibot_respond_msg" and "Reading" in json.dumps(f)
        responder = adapter.responder(job, "job-2")
        await responder.progress(Progress("Reading the MindIE docs"))
        await fake.wait_for(lambda: fake.subscriptions >= 2)  # reconnected and subscribed again
        await responder.finish(Reply(ReplyKind.ANSWER, "Use the MindIE-LLM service config.", "en"))

        await fake.wait_for(lambda: any(b["stream"]["finish"] for b in stream_frames(fake, rid)))
        frames = stream_frames(fake, rid)
        finals = [b for b in frames if b["stream"]["finish"]]
        assert len(finals) == 1 and finals[0]["stream"]["content"] == "Use the MindIE-LLM service config."
        contents = [b["stream"]["content"] for b in frames]
        assert any("Reading the MindIE docs" in c for c in contents)  # resent after the reconnect
        assert adapter.ws is not None and adapter.ws.sessions >= 2
    finally:
        await adapter.stop()


async def test_one_active_connection_per_bot(fake, make_settings, redis, keys) -> None:
    settings = ws_settings(make_settings, fake.url)
    replicas = [build(settings, redis, keys), build(settings, redis, keys)]
    for replica in replicas:
        await replica.start()
    try:
        await fake.wait_for(lambda: sum(r.ws.sessions for r in replicas) == 1)  # type: ignore[union-attr]
        await asyncio.sleep(0.5)  # several lock polls and heartbeats: the standby must stay idle
        assert fake.connections == 1 and fake.subscriptions == 1
        leader = next(r for r in replicas if r.ws.sessions == 1)  # type: ignore[union-attr]
        standby = next(r for r in replicas if r is not leader)
        await leader.stop()  # releases the lock; the standby takes over
        await fake.wait_for(lambda: fake.subscriptions == 2 and standby.ws.sessions == 1)  # type: ignore[union-attr]
        assert fake.connections == 2
    finally:
        for replica in replicas:
            await replica.stop()


async def test_unanswered_heartbeats_and_a_replacing_connection_cause_reconnects(fake, make_settings, redis, keys):
    adapter = build(ws_settings(make_settings, fake.url), redis, keys)
    await adapter.start()
    try:
        await fake.wait_subscribed()
        fake.answer_pings = False
        await fake.wait_for(lambda: fake.connections >= 2)  # two missed pongs: the socket counts as dead
        fake.answer_pings = True
        await fake.wait_subscribed(2)
        # someone else subscribes for the bot: WeCom sends disconnected_event to our connection
        async with websockets.connect(fake.url) as intruder:
            await intruder.send(json.dumps({"cmd": "aibot_subscribe", "headers": {"req_id": "x"},
                                            "body": {"bot_id": BOT, "secret": SECRET}}))
            await intruder.recv()
            await fake.wait_for(lambda: fake.subscriptions >= 4)  # we came back after a back-off
    finally:
        await adapter.stop()


async def test_wrong_secret_retries_with_backoff_and_never_subscribes(fake, make_settings, redis, keys) -> None:
    adapter = build(ws_settings(make_settings, fake.url, wecom_bot_secret="wrong"), redis, keys)
    await adapter.start()
    try:
        await fake.wait_for(lambda: fake.connections >= 3)
        assert fake.subscriptions == 0
        assert adapter.ws is not None and adapter.ws.sessions == 0
        assert [adapter.ws.backoff(n) for n in (1, 2, 3, 4, 5)] == [0.05, 0.1, 0.2, 0.2, 0.2]
        assert "wrong" not in repr(adapter.ws)
    finally:
        await adapter.stop()


async def test_card_click_welcome_and_a_rejected_final_frame(fake, make_settings, redis, keys) -> None:
    adapter = build(ws_settings(make_settings, fake.url), redis, keys)
    await adapter.start()
    try:
        welcome_rid = await fake.push_event(event_body("enter_chat"))
        await fake.wait_for(lambda: bool(fake.replies(welcome_rid)))
        (welcome,) = fake.replies(welcome_rid)
        assert welcome["cmd"] == "aibot_respond_welcome_msg" and welcome["body"]["msgtype"] == "text"

        rid = await fake.push_message(message_body("vllm on NPU?", chat_id="grp2", msgid="m-card"))
        (job,) = await wait_jobs(redis, keys, 1)
        options = (Option("vllm", "vLLM (upstream)", "vllm-project/vllm"),
                   Option("vllm-ascend", "vllm-ascend", "vllm-project/vllm-ascend"))
        fake.reject_when = lambda f: f.get("cmd") == "aibot_respond_msg" and f["body"]["stream"].get("finish")
        await adapter.responder(job, "job-3").finish(
            Reply(ReplyKind.CLARIFY, "Which one?\n\n1. vLLM (upstream)\n2. vllm-ascend", "en", options=options)
        )
        # the stream reply was refused (say the req_id died with an older connection): the text goes as a message
        await fake.wait_for(lambda: bool(fake.sent_messages()))
        (sent,) = fake.sent_messages()
        assert sent["body"]["chatid"] == "grp2" and "1. vLLM (upstream)" in sent["body"]["markdown"]["content"]
        rejected = fake.replies(rid, acked_only=False)[-1]
        assert rejected["body"]["msgtype"] == "stream_with_template_card"
        card = rejected["body"]["template_card"]
        assert [b["key"] for b in card["button_list"]] == ["clarify:vllm", "clarify:vllm-ascend"]

        click_rid = await fake.push_event(event_body(
            "template_card_event", {"event_key": "clarify:vllm-ascend", "task_id": card["task_id"]}, chat_id="grp2"))
        await fake.wait_for(lambda: bool(fake.replies(click_rid)))
        (update,) = fake.replies(click_rid)
        assert update["cmd"] == "aibot_respond_update_msg"
        assert update["body"]["response_type"] == "update_template_card"
        assert update["body"]["template_card"]["task_id"] == card["task_id"]
        _, resumed = await wait_jobs(redis, keys, 2)
        assert resumed.choice == "vllm-ascend" and resumed.thread == job.thread

        bogus = await fake.push_event(event_body(
            "template_card_event", {"event_key": "clarify:sglang", "task_id": card["task_id"]}, chat_id="grp2"))
        await fake.wait_for(lambda: bool(fake.replies(bogus)))
        assert "expired" in json.dumps(fake.replies(bogus)[0]["body"])  # not an option of that card
        assert len(await jobs(redis, keys)) == 2
    finally:
        await adapter.stop()


async def test_job_longer_than_the_window_closes_the_stream_and_sends_the_result(fake, make_settings, redis, keys):
    adapter = build(ws_settings(make_settings, fake.url, wecom_stream_window_seconds=0.3), redis, keys)
    await adapter.start()
    try:
        rid = await fake.push_message(message_body("explain msModelSlim W8A8 calibration", msgid="m-late"))
        (job,) = await wait_jobs(redis, keys, 1)
        await fake.wait_for(lambda: any(b["stream"]["finish"] for b in stream_frames(fake, rid)))
        final = [b for b in stream_frames(fake, rid) if b["stream"]["finish"]]
        assert len(final) == 1 and "Still working" in final[0]["stream"]["content"]
        await adapter.responder(job, "job-4").finish(Reply(ReplyKind.ANSWER, "Calibrate with 128 samples.", "en"))
        await fake.wait_for(lambda: bool(fake.sent_messages()))
        (sent,) = fake.sent_messages()
        assert sent["body"] == {"chatid": "zhangsan", "msgtype": "markdown",
                                "markdown": {"content": "Calibrate with 128 samples."}}
        assert len([b for b in stream_frames(fake, rid) if b["stream"]["finish"]]) == 1
    finally:
        await adapter.stop()


# --- the whole bot: web app (holding the connection) + worker ---------------------------------


async def test_end_to_end_real_core_answers_a_single_chat(fake, make_settings) -> None:
    async with running_bot(ws_settings(make_settings, fake.url)) as stack:
        rid = await fake.push_message(message_body("vllm-ascend 0.9.1 with vllm 0.11.0 fails at startup", user="lisi"))
        await fake.wait_for(lambda: any(b["stream"]["finish"] for b in stream_frames(fake, rid)))
        await stack.wait_idle()
    frames = stream_frames(fake, rid)
    final = [b for b in frames if b["stream"]["finish"]]
    assert len(final) == 1 and "vllm-ascend" in final[0]["stream"]["content"]
    assert "Researching" in frames[0]["stream"]["content"]


async def test_end_to_end_drop_mid_answer_the_answer_arrives_once(fake, make_settings) -> None:
    gate = asyncio.Event()
    scripted = Scripted(lambda m: Reply(ReplyKind.ANSWER, "Check HCCL_CONNECT_TIMEOUT and the rank table.", "en"),
                        progress=("Searching vllm-ascend issues…",), gate=gate)
    async with running_bot(ws_settings(make_settings, fake.url), conversation=scripted) as stack:
        await fake.wait_subscribed()
        fake.drop_when = lambda f: "Searching vllm-ascend issues" in json.dumps(f)
        body = message_body("@AscendBot HCCL timeout when starting vllm-ascend", chat_id="grpE", msgid="e2e-drop")
        rid = await fake.push_message(body)
        await fake.wait_for(lambda: fake.subscriptions >= 2)  # the socket died on the progress frame
        gate.set()
        await fake.wait_for(lambda: any(b["stream"]["finish"] for b in stream_frames(fake, rid)))
        await fake.push_message(body)  # WeCom redelivers the same msgid after the reconnect
        duplicates = stack.components.metrics.events.labels("wecom", "duplicate")

        async def refused() -> None:  # the redelivery reached ingress and was refused
            while duplicates._value.get() < 1:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(refused(), 15)
        await stack.wait_idle()
    frames = stream_frames(fake, rid)
    finals = [b for b in frames if b["stream"]["finish"]]
    assert len(finals) == 1 and finals[0]["stream"]["content"] == "Check HCCL_CONNECT_TIMEOUT and the rank table."
    assert len({b["stream"]["id"] for b in frames}) == 1
    assert len(scripted.messages) == 1  # the redelivery was deduplicated
    assert any("Searching vllm-ascend issues" in b["stream"]["content"] for b in frames)  # resent, then acked
