"""Long-connection mode: the real lark-oapi 1.7.5 WS client against a fake gateway.

Also pins down the SDK fact this mode is built around: the stock client drops
CARD frames (card callbacks) without dispatching or acknowledging them.
"""
import asyncio

import pytest

from adapters.feishu.ws import LongConnection
from tests.support.fake_feishu import FakeFeishu, FakeWsGateway, card_action_event, message_event


def _frame(kind: str, payload: bytes):
    from lark_oapi.ws.pb.pbbp2_pb2 import Frame

    frame = Frame()
    frame.SeqID, frame.LogID, frame.service, frame.method = 0, 0, 1, 1
    for key, value in (("type", kind), ("message_id", "m1"), ("sum", "1"), ("seq", "0"), ("trace_id", "t")):
        h = frame.headers.add()
        h.key, h.value = key, value
    frame.payload = payload
    return frame


async def test_stock_lark_oapi_drops_card_frames_which_is_why_we_override():
    from lark_oapi.ws.client import Client

    seen: list[bytes] = []

    class Handler:
        def _do_without_validation(self, payload: bytes):
            seen.append(payload)

    client = Client("cli_test", "secret", event_handler=Handler())
    written: list[bytes] = []

    async def capture(data: bytes) -> None:
        written.append(data)

    client._write_message = capture
    await client._handle_data_frame(_frame("event", b'{"schema":"2.0"}'))
    assert seen == [b'{"schema":"2.0"}'] and len(written) == 1  # events: dispatched and acknowledged
    await client._handle_data_frame(_frame("card", b'{"schema":"2.0"}'))
    assert len(seen) == 1 and len(written) == 1  # cards: neither dispatched nor acknowledged (1.7.5)
    client._cache._cron.cancel()  # the SDK starts a cache task on the current loop


@pytest.fixture
async def gateway_and_api():
    async with FakeFeishu() as fake, FakeWsGateway() as gateway:
        fake.gateway = gateway
        yield fake, gateway


async def test_events_and_card_callbacks_flow_over_the_real_long_connection(gateway_and_api):
    fake, gateway = gateway_and_api
    calls: list[tuple[str, dict]] = []

    async def dispatch(kind: str, payload: dict):
        calls.append((kind, payload))
        if kind == "card":
            return {"toast": {"type": "success", "content": "ok"}}
        return None

    conn = LongConnection(fake.app_id, fake.app_secret, fake.url, dispatch)
    await conn.start()
    try:
        event = message_event("hello over ws")
        code, body = await gateway.push("event", event)
        assert code == 200 and body is None
        card = card_action_event({"aic": "choose", "key": "k", "thread": "om_1"}, open_message_id="om_card")
        code, body = await gateway.push("card", card)
        assert code == 200 and body == {"toast": {"type": "success", "content": "ok"}}
        code, _ = await gateway.push("event", message_event("a large payload " * 500), parts=3)
        assert code == 200
        assert [k for k, _ in calls] == ["event", "card", "event"]
        assert calls[0][1] == event and calls[1][1] == card
        assert calls[2][1]["event"]["message"]["content"].count("a large payload") == 500
    finally:
        await asyncio.to_thread(conn.stop)


async def test_a_failing_handler_is_acknowledged_with_500_so_feishu_pushes_again(gateway_and_api):
    fake, gateway = gateway_and_api

    async def dispatch(kind: str, payload: dict):
        raise ConnectionError("redis down")

    conn = LongConnection(fake.app_id, fake.app_secret, fake.url, dispatch)
    await conn.start()
    try:
        code, _ = await gateway.push("event", message_event("x"))
        assert code == 500
    finally:
        await asyncio.to_thread(conn.stop)
