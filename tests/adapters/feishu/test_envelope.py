"""Verifying one callback body: signature, timestamp window, decryption, token, url_verification."""
import json
import time

import pytest

from adapters.feishu import crypto
from adapters.feishu.envelope import CallbackSecrets, Rejected, open_callback
from tests.support.fake_feishu import message_event, seal, url_verification

KEY, TOKEN = "e-key", "v-token"
SECRETS = CallbackSecrets(encrypt_key=KEY, verification_token=TOKEN, window_seconds=300)


def open_(body, headers, now=None):
    return open_callback(body, headers, SECRETS, now if now is not None else time.time())


def test_encrypted_signed_event_opens():
    event = message_event("hi")
    body, headers = seal(event, KEY)
    assert open_(body, headers) == event


def test_url_verification_encrypted_needs_no_signature():
    body, headers = seal(url_verification("ch-1"), KEY, sign=False)
    assert open_(body, headers)["challenge"] == "ch-1"


def test_url_verification_plain_is_answered_after_the_token_check():
    body = json.dumps(url_verification("ch-2")).encode()
    assert open_(body, {})["challenge"] == "ch-2"
    with pytest.raises(Rejected) as r:
        open_(json.dumps(url_verification("ch-2", token="wrong")).encode(), {})
    assert r.value.status == 401


def reject(body, headers, now=None) -> Rejected:
    with pytest.raises(Rejected) as r:
        open_(body, headers, now)
    return r.value


def test_bad_signature_is_401():
    body, headers = seal(message_event("hi"), KEY)
    headers["x-lark-signature"] = "0" * 64
    assert reject(body, headers).status == 401


def test_body_changed_after_signing_is_401():
    body, headers = seal(message_event("hi"), KEY)
    assert reject(body.replace(b'"}', b'" }'), headers).status == 401


def test_signature_with_another_key_is_401():
    body, headers = seal(message_event("hi"), KEY)
    headers["x-lark-signature"] = crypto.signature(headers["x-lark-request-timestamp"], "nonce-1", "other", body)
    assert reject(body, headers).status == 401


def test_stale_timestamp_is_401_even_with_a_valid_signature():
    old = str(int(time.time()) - 3600)
    body, headers = seal(message_event("hi"), KEY, timestamp=old)
    assert reject(body, headers).status == 401


def test_unsigned_event_is_401_when_an_encrypt_key_is_configured():
    body, headers = seal(message_event("hi"), KEY, sign=False)
    assert reject(body, headers).status == 401
    assert reject(json.dumps(message_event("hi")).encode(), {}).status == 401


def test_wrong_verification_token_is_401():
    body, headers = seal(message_event("hi", token="not-ours"), KEY)
    assert reject(body, headers).status == 401


def test_undecryptable_but_correctly_signed_body_is_401():
    body = json.dumps({"encrypt": crypto.encrypt("another key", b'{"a":1}')}).encode()
    ts = str(int(time.time()))
    headers = {"x-lark-request-timestamp": ts, "x-lark-request-nonce": "n", "x-lark-signature": crypto.signature(ts, "n", KEY, body)}
    assert reject(body, headers).status == 401


@pytest.mark.parametrize("body", [b"not json", b"\xff\xfe\x00", b"[1,2]", b'{"encrypt": 5}'])
def test_malformed_bodies_are_400(body):
    ts = str(int(time.time()))
    headers = {"x-lark-request-timestamp": ts, "x-lark-request-nonce": "n", "x-lark-signature": crypto.signature(ts, "n", KEY, body)}
    assert reject(body, headers).status == 400


def test_decrypted_non_json_is_401():
    body, headers = seal(b"hello world", KEY)
    assert reject(body, headers).status == 401


def test_secrets_never_print():
    assert KEY not in repr(SECRETS) and TOKEN not in repr(SECRETS)
