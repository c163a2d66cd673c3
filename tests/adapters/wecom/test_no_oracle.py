"""WeCom callback: msg_signature is checked before decryption, and every verification failure
(signature, padding, length field, receive id) gets one identical answer."""
from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from adapters.wecom.crypto import WeComCrypto, aes_key, signature
from tests.support.fake_wecom import FakeQyapi, WeComCallbackClient, message_body
from tests.support.stack import running_bot

TOKEN, AES = "oracle-wecom-token", "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"


@pytest.fixture
async def stack(make_settings) -> AsyncIterator[Any]:
    async with FakeQyapi() as qyapi:
        settings = make_settings(wecom_token=TOKEN, wecom_encoding_aes_key=AES, wecom_bot_id="BOT1", wecom_api_url=qyapi.url,
                                 allowed_workspaces=["wecom:BOT1"])
        async with running_bot(settings, worker=False) as running:
            yield running


def raw_ciphertext(plain: bytes) -> str:
    """AES-CBC under the bot's key with no padding added: lets a test choose the last byte."""
    key = aes_key(AES)
    enc = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(enc.update(plain) + enc.finalize()).decode()


def signed(ciphertext: str, token: str = TOKEN) -> tuple[dict[str, str], bytes]:
    ts, nonce = str(int(time.time())), "oracle"
    params = {"msg_signature": signature(token, ts, nonce, ciphertext), "timestamp": ts, "nonce": nonce}
    return params, json.dumps({"encrypt": ciphertext}).encode()


async def test_every_verification_failure_gets_one_identical_answer(stack) -> None:
    good = WeComCrypto(TOKEN, AES).encrypt(json.dumps(message_body("q")).encode())
    cases = {
        "bad signature + garbage ciphertext": ({**signed("@@@")[0], "msg_signature": "0" * 40}, signed("@@@")[1]),
        "bad signature + valid ciphertext": ({**signed(good)[0], "msg_signature": "0" * 40}, signed(good)[1]),
        "signed with another token": signed(good, token="other"),
        "good signature + bad padding": signed(raw_ciphertext(os.urandom(31) + b"\x00")),
        "good signature + length out of bounds": signed(raw_ciphertext(os.urandom(16) + b"\xff" * 4 + b"\x0c" * 12)),
        "good signature + not base64": signed("not base64!"),
        "good signature + wrong receive id": signed(WeComCrypto(TOKEN, AES, "wx-someone-else").encrypt(b"{}")),
    }
    client = WeComCallbackClient(stack.base_url, TOKEN, AES)
    answers = {name: await client.post_raw(params, body) for name, (params, body) in cases.items()}
    assert {(r.status, r.raw) for r in answers.values()} == {(403, b"verification failed")}, answers
    assert await stack.redis.xlen(stack.keys.jobs) == 0


async def test_nothing_is_decrypted_before_the_signature_matches(stack, monkeypatch) -> None:
    calls: list[str] = []
    real = WeComCrypto.decrypt

    def spy(self: WeComCrypto, ciphertext: str) -> bytes:
        calls.append(ciphertext)
        return real(self, ciphertext)

    monkeypatch.setattr(WeComCrypto, "decrypt", spy)
    good = WeComCrypto(TOKEN, AES).encrypt(json.dumps(message_body("q")).encode())
    params, body = signed(good)
    client = WeComCallbackClient(stack.base_url, TOKEN, AES)
    assert (await client.post_raw({**params, "msg_signature": "f" * 40}, body)).status == 403
    assert calls == []
    assert (await client.post_raw(params, body)).status == 200  # the control: a good signature is decrypted
    assert calls[0] == good  # (the fake then decrypts the bot's encrypted reply too)
