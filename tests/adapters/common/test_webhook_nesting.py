"""A deeply nested JSON body to the Feishu or WeCom endpoint is a clean 400, never a RecursionError (500).

Over real HTTP to the real web app (uvicorn), with the platforms' fakes playing the sender. Before the
fix, `json.loads` raised RecursionError on these bodies before any authentication and the server
answered 500; other malformed bodies must stay 400 as well.
"""
from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest

from adapters.feishu import crypto as feishu_crypto
from adapters.wecom.crypto import WeComCrypto, signature
from tests.support.fake_feishu import FakeFeishu, message_event, seal, url_verification
from tests.support.fake_wecom import FakeQyapi, WeComCallbackClient, message_body
from tests.support.stack import running_bot

FEISHU_KEY, FEISHU_TOKEN = "nest-encrypt-key", "nest-v-token"
WECOM_TOKEN, WECOM_AES = "nest-wecom-token", "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"

# Each under WeCom's 256 KB body cap, so that it is the nesting, not the size, that is refused.
DEEP = {
    "100,000 [": b"[" * 100_000,
    "30,000 nested objects": b'{"a":' * 30_000 + b"1" + b"}" * 30_000,
    "nested just under the interpreter's limit": b"[" * 900 + b"]" * 900,
    "deep inside a normal-looking object": b'{"encrypt":"x","schema":' + b"[" * 100_000,
}
MALFORMED = [b"", b"not json", b"\xff\xfe\x00", b'{"encrypt":', b"[1,2]", b"null", b'"just a string"']


@pytest.fixture
async def feishu(make_settings: Callable[..., Any]) -> AsyncIterator[Callable[..., Any]]:
    async with FakeFeishu() as fake:
        def build(**overrides: Any) -> Any:
            values: dict[str, Any] = dict(
                feishu_app_id=fake.app_id, feishu_app_secret=fake.app_secret, feishu_verification_token=FEISHU_TOKEN,
                feishu_encrypt_key=FEISHU_KEY, feishu_api_url=fake.url, allowed_workspaces=["feishu:tenant1"],
            )
            values.update(overrides)
            return make_settings(**values)

        yield build


@pytest.fixture
async def wecom_settings(make_settings: Callable[..., Any]) -> AsyncIterator[Any]:
    async with FakeQyapi() as qyapi:
        yield make_settings(wecom_token=WECOM_TOKEN, wecom_encoding_aes_key=WECOM_AES, wecom_bot_id="BOT1",
                            wecom_api_url=qyapi.url, allowed_workspaces=["wecom:BOT1"])


def feishu_signed(body: bytes) -> dict[str, str]:
    ts = str(int(time.time()))
    return {"content-type": "application/json", "x-lark-request-timestamp": ts, "x-lark-request-nonce": "n",
            "x-lark-signature": feishu_crypto.signature(ts, "n", FEISHU_KEY, body)}


async def test_feishu_deep_or_malformed_body_is_400(feishu) -> None:
    """Unsigned: the body is parsed (an unsigned url_verification is allowed) before anything is checked."""
    async with running_bot(feishu(), worker=False) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=20) as http:
            for path in ("/feishu/events", "/feishu/card"):
                for name, body in DEEP.items():
                    r = await http.post(path, content=body, headers={"content-type": "application/json"})
                    assert r.status_code == 400, (path, name, r.status_code)
                for body in MALFORMED:
                    r = await http.post(path, content=body, headers={"content-type": "application/json"})
                    assert r.status_code == 400, (path, body, r.status_code)
            # The endpoint is still healthy: a url_verification is answered.
            plain = await http.post("/feishu/events", json=url_verification("still-here", token=FEISHU_TOKEN))
            assert plain.json() == {"challenge": "still-here"}
        assert await stack.redis.xlen(stack.keys.jobs) == 0


async def test_feishu_signed_deep_body_is_400_and_a_deep_encrypted_payload_is_refused(feishu) -> None:
    """Even past the signature (only Feishu could send these), nesting cannot crash the handler."""
    async with running_bot(feishu(), worker=False) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=20) as http:
            deep = DEEP["100,000 ["]
            assert (await http.post("/feishu/events", content=deep, headers=feishu_signed(deep))).status_code == 400
            inner, headers = seal(b'{"a":' * 30_000 + b"1" + b"}" * 30_000, FEISHU_KEY)
            r = await http.post("/feishu/events", content=inner, headers=headers)
            assert r.status_code == 401  # the decrypted payload is unusable: the one undecryptable answer
            ok, headers = seal(message_event("vllm-ascend q", message_id="om_ok", token=FEISHU_TOKEN), FEISHU_KEY)
            assert (await http.post("/feishu/events", content=ok, headers=headers)).status_code == 200


async def test_wecom_deep_or_malformed_body_is_400(wecom_settings) -> None:
    async with running_bot(wecom_settings, worker=False) as stack:
        wecom = WeComCallbackClient(stack.base_url, WECOM_TOKEN, WECOM_AES)
        params, _ = wecom.seal(message_body("hi"))
        for name, body in DEEP.items():
            result = await wecom.post_raw(params, body)
            assert result.status == 400, (name, result.status)
        for body in MALFORMED:
            result = await wecom.post_raw(params, body)
            assert result.status == 400, (body, result.status)
        assert await stack.redis.xlen(stack.keys.jobs) == 0


async def test_wecom_signed_deep_payload_is_400(wecom_settings) -> None:
    """A correctly signed and encrypted callback whose message is deeply nested: 400, not 500."""
    crypto = WeComCrypto(WECOM_TOKEN, WECOM_AES)
    async with running_bot(wecom_settings, worker=False) as stack:
        wecom = WeComCallbackClient(stack.base_url, WECOM_TOKEN, WECOM_AES)
        for message in (b"[" * 100_000, b'{"msgid":"m","msgtype":"text","text":' + b'{"a":' * 20_000):
            ts, nonce = str(int(time.time())), "nest"
            ciphertext = crypto.encrypt(message)
            params = {"msg_signature": signature(WECOM_TOKEN, ts, nonce, ciphertext), "timestamp": ts, "nonce": nonce}
            result = await wecom.post_raw(params, json.dumps({"encrypt": ciphertext}).encode())
            assert result.status == 400, result.status
        ok = await wecom.post(message_body("still answering"))
        assert ok.status == 200
