"""Webhook routes with the real Ingress on Redis: verification, dedupe, url_verification, card callbacks."""
import json
import time

import httpx
import pytest
import redis.asyncio as aioredis
from starlette.applications import Starlette

from adapters.feishu import crypto
from adapters.feishu.envelope import CallbackSecrets
from adapters.feishu.inbound import BotIdentity, FeishuInbound
from adapters.feishu.parse import choice_value, parse_message_event
from adapters.feishu.webhook import feishu_routes
from core.ingress import Ingress
from core.messages import InboundMessage
from tests.support.fake_feishu import card_action_event, message_event, seal, url_verification
from tests.support.fake_http import free_port

KEY, TOKEN = "e-key", "v-token"


def app_for(redis, keys, bot_open_id="ou_bot") -> Starlette:
    inbound = FeishuInbound(Ingress(redis, keys, 9 * 3600), BotIdentity(bot_open_id, None))
    return Starlette(routes=feishu_routes(inbound, CallbackSecrets(KEY, TOKEN, 300)))


@pytest.fixture
async def client(redis, keys):
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app_for(redis, keys)), base_url="http://bot") as c:
        yield c


async def jobs(redis, keys) -> list[InboundMessage]:
    entries = await redis.xrange(keys.jobs)
    return [InboundMessage.from_json(fields[b"message"]) for _, fields in entries]


async def post(client, path, payload, **seal_kw):
    body, headers = seal(payload, KEY, **seal_kw)
    return await client.post(path, content=body, headers=headers)


async def test_group_mention_is_enqueued_once_with_a_200(client, redis, keys):
    r = await post(client, "/feishu/events", message_event("NPU OOM", message_id="om_1"))
    assert r.status_code == 200 and r.json() == {"msg": "success"}
    [job] = await jobs(redis, keys)
    assert job.text == "NPU OOM" and job.thread == "om_1"


async def test_same_event_twice_and_same_message_under_a_new_event_id_are_one_job(client, redis, keys):
    event = message_event("q", message_id="om_dup", event_id="ev_dup")
    assert (await post(client, "/feishu/events", event)).status_code == 200
    assert (await post(client, "/feishu/events", event)).status_code == 200  # Feishu retry
    again = message_event("q", message_id="om_dup", event_id="ev_other")  # re-pushed under a new event id
    assert (await post(client, "/feishu/events", again)).status_code == 200
    assert len(await jobs(redis, keys)) == 1
    ttl = await redis.ttl(keys.dedupe("feishu", "om_dup"))
    assert ttl > 8 * 3600  # Feishu retries for ~7 h


async def test_group_message_without_mention_is_acknowledged_and_dropped(client, redis, keys):
    r = await post(client, "/feishu/events", message_event("chatting", mention_bot=False))
    assert r.status_code == 200
    assert await jobs(redis, keys) == []


@pytest.mark.parametrize(
    "tamper, status",
    [
        (lambda b, h: (b, {**h, "x-lark-signature": "f" * 64}), 401),
        (lambda b, h: (b, {k: v for k, v in h.items() if k != "x-lark-signature"}), 401),
        (lambda b, h: (b.replace(b'{"encrypt": "', b'{"encrypt": "AAAA'), h), 401),  # body changed after signing
        (lambda b, h: (b, {**h, "x-lark-request-timestamp": "1000000000"}), 401),  # stale (and signature mismatch)
        (lambda b, h: (b"\xff\xfe garbage", h), 401),
    ],
)
async def test_tampered_requests_are_rejected_and_nothing_enqueued(client, redis, keys, tamper, status):
    body, headers = seal(message_event("q"), KEY)
    body, headers = tamper(body, headers)
    r = await client.post("/feishu/events", content=body, headers=headers)
    assert r.status_code == status
    assert await jobs(redis, keys) == []


async def test_wrong_token_is_rejected(client, redis, keys):
    r = await post(client, "/feishu/events", message_event("q", token="someone-else"))
    assert r.status_code == 401 and await jobs(redis, keys) == []


async def test_undecryptable_body_with_valid_signature_is_401(client, redis, keys):
    body = json.dumps({"encrypt": crypto.encrypt("wrong key", b'{"x":1}')}).encode()
    headers = {"x-lark-request-timestamp": str(int(time.time())), "x-lark-request-nonce": "n"}
    headers["x-lark-signature"] = crypto.signature(headers["x-lark-request-timestamp"], "n", KEY, body)
    r = await client.post("/feishu/events", content=body, headers=headers)
    assert r.status_code == 401 and await jobs(redis, keys) == []


async def test_url_verification_plain_and_encrypted(client):
    r = await client.post("/feishu/events", json=url_verification("plain-challenge"))
    assert r.status_code == 200 and r.json() == {"challenge": "plain-challenge"}
    r = await post(client, "/feishu/events", url_verification("enc-challenge"), sign=False)
    assert r.status_code == 200 and r.json() == {"challenge": "enc-challenge"}
    r = await post(client, "/feishu/card", url_verification("card-challenge"), sign=False)
    assert r.json() == {"challenge": "card-challenge"}
    r = await client.post("/feishu/events", json=url_verification("x", token="bad"))
    assert r.status_code == 401


async def test_card_button_enqueues_a_choice_once(client, redis, keys):
    question = parse_message_event(message_event("MindIE", message_id="om_q"), "ou_bot")
    value = choice_value("mindie-llm", "MindIE-LLM", question)
    r = await post(client, "/feishu/card", card_action_event(value, open_message_id="om_card"))
    assert r.status_code == 200 and r.json()["toast"]["type"] == "success"
    r = await post(client, "/feishu/card", card_action_event(value, open_message_id="om_card"))  # double click
    assert r.json()["toast"]["type"] == "info"
    [job] = await jobs(redis, keys)
    assert job.choice == "mindie-llm" and job.conversation_key == question.conversation_key


async def test_card_callback_checks_are_the_same(client, redis, keys):
    value = {"aic": "choose", "key": "k", "thread": "om_1"}
    r = await post(client, "/feishu/card", card_action_event(value, open_message_id="om_c", token="bad"))
    assert r.status_code == 401
    body, headers = seal(card_action_event(value, open_message_id="om_c"), KEY)
    r = await client.post("/feishu/card", content=body, headers={**headers, "x-lark-signature": "0" * 64})
    assert r.status_code == 401
    assert await jobs(redis, keys) == []


async def test_oversized_body_is_413(client):
    r = await client.post("/feishu/events", content=b"x" * (1024 * 1024 + 1), headers={"content-type": "application/json"})
    assert r.status_code == 413


async def test_redis_down_is_503_so_feishu_retries(keys):
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    # no retries with backoff against a port nobody listens on: the 503 is what is tested, not redis-py's patience
    dead = aioredis.Redis(host="127.0.0.1", port=free_port(), socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0))
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app_for(dead, keys)), base_url="http://bot") as c:
            r = await post(c, "/feishu/events", message_event("q"))
            assert r.status_code == 503
            question = parse_message_event(message_event("MindIE", message_id="om_q"), "ou_bot")
            r = await post(c, "/feishu/card", card_action_event(choice_value("k", "K", question), open_message_id="om_c"))
            assert r.status_code == 503
    finally:
        await dead.aclose()


async def test_oversized_chunked_body_without_a_length_is_413(client, redis, keys):
    async def chunks():  # no Content-Length: the cap must hold while reading
        for _ in range(20):
            yield b"x" * 64 * 1024

    r = await client.post("/feishu/events", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and await jobs(redis, keys) == []
