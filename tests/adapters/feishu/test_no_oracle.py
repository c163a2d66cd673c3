"""Feishu webhook with an Encrypt Key: the signature is checked before anything is decrypted, and every
body that fails a secret (signature, timestamp, padding, decrypted JSON, token) gets one identical
answer, so a forger learns nothing from which check failed (no CBC padding oracle).

Real routes in a Starlette app, driven over HTTP, with the real Ingress on Redis.
"""
from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import AsyncIterator, Callable

import httpx
import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from starlette.applications import Starlette

from adapters.feishu import crypto
from adapters.feishu.envelope import CallbackSecrets
from adapters.feishu.inbound import BotIdentity, FeishuInbound
from adapters.feishu.webhook import feishu_routes
from core.ingress import Ingress
from tests.support.fake_feishu import message_event, seal, url_verification

KEY, TOKEN = "e-key", "v-token"
Case = Callable[[], tuple[bytes, dict[str, str]]]


@pytest.fixture
async def client(redis, keys) -> AsyncIterator[httpx.AsyncClient]:
    inbound = FeishuInbound(Ingress(redis, keys, 9 * 3600), BotIdentity("ou_bot", None))
    app = Starlette(routes=feishu_routes(inbound, CallbackSecrets(KEY, TOKEN, 300)))
    transport = httpx.ASGITransport(app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://bot") as c:
        yield c


def signed(body: bytes, key: str = KEY, timestamp: str | None = None) -> tuple[bytes, dict[str, str]]:
    ts = timestamp or str(int(time.time()))
    headers = {"content-type": "application/json", "x-lark-request-timestamp": ts, "x-lark-request-nonce": "n-1"}
    headers["x-lark-signature"] = crypto.signature(ts, "n-1", key, body)
    return body, headers


def unsigned(body: bytes) -> tuple[bytes, dict[str, str]]:
    return body, {"content-type": "application/json"}


def envelope(ciphertext: str) -> bytes:
    return json.dumps({"encrypt": ciphertext}).encode()


def bad_padding_ciphertext() -> str:
    """A well-formed ciphertext under our key whose plaintext ends in 0x00: never valid PKCS#7."""
    block = os.urandom(15) + b"\x00"
    iv = os.urandom(16)
    enc = Cipher(algorithms.AES(crypto._key(KEY)), modes.CBC(iv)).encryptor()
    return base64.b64encode(iv + enc.update(block) + enc.finalize()).decode()


def good_padding_garbage_ciphertext() -> str:
    """Decrypts cleanly (valid padding) to bytes that are not JSON: what a padding oracle hunts for."""
    return crypto.encrypt(KEY, b"\x8f\x01 not json at all")


def valid_event_with_bad_signature() -> tuple[bytes, dict[str, str]]:
    body, headers = seal(message_event("q"), KEY)
    return body, {**headers, "x-lark-signature": "0" * 64}


CASES: dict[str, Case] = {
    "bad signature + garbage ciphertext": lambda: (envelope("!!not base64!!"), valid_event_with_bad_signature()[1]),
    "bad signature + bad padding": lambda: (envelope(bad_padding_ciphertext()), valid_event_with_bad_signature()[1]),
    "bad signature + valid ciphertext": valid_event_with_bad_signature,
    "good signature + bad padding": lambda: signed(envelope(bad_padding_ciphertext())),
    "good signature + good padding, not JSON": lambda: signed(envelope(good_padding_garbage_ciphertext())),
    "good signature + wrong key": lambda: signed(envelope(crypto.encrypt("another key", b'{"a":1}'))),
    "good signature + wrong token": lambda: seal(message_event("q", token="not-ours"), KEY),
    "good signature, stale timestamp": lambda: seal(message_event("q"), KEY, timestamp=str(int(time.time()) - 3600)),
    "signed with another key": lambda: signed(envelope(crypto.encrypt(KEY, json.dumps(message_event("q")).encode())), key="x"),
    "unsigned + bad padding": lambda: unsigned(envelope(bad_padding_ciphertext())),
    "unsigned + good padding, not JSON": lambda: unsigned(envelope(good_padding_garbage_ciphertext())),
    "unsigned + decrypts to a JSON list": lambda: unsigned(envelope(crypto.encrypt(KEY, b"[1,2]"))),
    "unsigned + wrong token": lambda: seal(url_verification("c", token="not-ours"), KEY, sign=False),
    "unsigned + valid event, right token": lambda: seal(message_event("q"), KEY, sign=False),
    "unsigned plaintext event": lambda: unsigned(json.dumps(message_event("q")).encode()),
}


@pytest.mark.parametrize("path", ["/feishu/events", "/feishu/card"])
async def test_every_unauthenticated_or_undecryptable_body_gets_one_identical_answer(client, redis, keys, path) -> None:
    answers = {}
    for name, case in CASES.items():
        body, headers = case()
        r = await client.post(path, content=body, headers=headers)
        answers[name] = (r.status_code, r.content)
    assert len(set(answers.values())) == 1, answers
    [(status, content)] = set(answers.values())
    assert status == 401 and json.loads(content) == {"msg": "unauthenticated"}
    assert await redis.xlen(keys.jobs) == 0


async def test_the_signature_is_checked_before_anything_is_decrypted(client, monkeypatch) -> None:
    calls: list[str] = []
    real = crypto.decrypt

    def spy(key: str, data: str) -> bytes:
        calls.append(data)
        return real(key, data)

    monkeypatch.setattr(crypto, "decrypt", spy)
    for name in ("bad signature + garbage ciphertext", "bad signature + valid ciphertext", "good signature, stale timestamp"):
        body, headers = CASES[name]()
        assert (await client.post("/feishu/events", content=body, headers=headers)).status_code == 401
    assert calls == []
    body, headers = seal(message_event("q"), KEY)  # the control: a good signature does reach decryption
    assert (await client.post("/feishu/events", content=body, headers=headers)).status_code == 200
    assert len(calls) == 1


@pytest.mark.parametrize("sign", [True, False])
async def test_url_verification_still_works_encrypted_signed_or_not_and_plain(client, sign) -> None:
    body, headers = seal(url_verification("ch-enc"), KEY, sign=sign)
    r = await client.post("/feishu/events", content=body, headers=headers)
    assert r.status_code == 200 and r.json() == {"challenge": "ch-enc"}
    r = await client.post("/feishu/card", json=url_verification("ch-plain"))
    assert r.status_code == 200 and r.json() == {"challenge": "ch-plain"}


async def test_a_url_verification_with_a_bad_signature_is_refused_like_the_rest(client) -> None:
    body, headers = seal(url_verification("ch"), KEY)
    r = await client.post("/feishu/events", content=body, headers={**headers, "x-lark-signature": "f" * 64})
    assert (r.status_code, r.json()) == (401, {"msg": "unauthenticated"})
