"""Feishu callback crypto: the published known-answer vector, and agreement with lark-oapi's own code."""
import json

import pytest

from adapters.feishu import crypto

# Feishu's documented example: Encrypt Key "test key", ciphertext below, plaintext "hello world"
KAT_KEY = "test key"
KAT_CIPHERTEXT = "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzghk="


def test_known_answer_vector_decrypts_to_hello_world():
    assert crypto.decrypt(KAT_KEY, KAT_CIPHERTEXT) == b"hello world"


def test_round_trip_with_a_fixed_iv_is_deterministic_and_reversible():
    a = crypto.encrypt("k", "飞书 payload".encode(), iv=b"\x01" * 16)
    b = crypto.encrypt("k", "飞书 payload".encode(), iv=b"\x01" * 16)
    assert a == b
    assert crypto.decrypt("k", a) == "飞书 payload".encode()


def test_lark_oapi_decrypts_what_we_encrypt():
    from lark_oapi.core.utils import AESCipher

    body = json.dumps({"schema": "2.0", "header": {"event_id": "e"}}).encode()
    assert AESCipher("my key").decrypt_str(crypto.encrypt("my key", body)) == body.decode()


@pytest.mark.parametrize(
    "ciphertext",
    [
        "not base64!!",
        "",
        "AAAA",  # valid base64, far too short
        crypto.encrypt("another key", b"hello world"),  # wrong key: bad padding
        "P37w+VZImNgPEO1RBhJ6RtKl7n6zymIbEG1pReEzgh",  # truncated
    ],
)
def test_undecryptable_input_raises_decrypt_error(ciphertext):
    with pytest.raises(crypto.DecryptError):
        crypto.decrypt(KAT_KEY, ciphertext)


def test_signature_matches_lark_oapi_verify_sign():
    from lark_oapi.core.model import RawRequest
    from lark_oapi.event.dispatcher_handler import EventDispatcherHandler

    body = b'{"encrypt":"abc"}'
    sig = crypto.signature("1700000000", "n0nce", "ekey", body)
    request = RawRequest()
    request.body = body
    request.headers = {
        "X-Lark-Request-Timestamp": "1700000000",
        "X-Lark-Request-Nonce": "n0nce",
        "X-Lark-Signature": sig,
    }
    EventDispatcherHandler()._verify_sign(request, "ekey")  # raises on mismatch
    assert crypto.signature_ok("1700000000", "n0nce", "ekey", body, sig)
    assert not crypto.signature_ok("1700000000", "n0nce", "ekey", body + b" ", sig)
    assert not crypto.signature_ok("1700000001", "n0nce", "ekey", body, sig)


def test_timestamp_window():
    assert crypto.timestamp_fresh("1000", now=1200, window_seconds=300)
    assert crypto.timestamp_fresh("1300", now=1200, window_seconds=300)  # small clock skew ahead
    assert not crypto.timestamp_fresh("800", now=1200, window_seconds=300)
    assert not crypto.timestamp_fresh("", now=1200, window_seconds=300)
    assert not crypto.timestamp_fresh("soon", now=1200, window_seconds=300)


def test_token_comparison():
    assert crypto.token_ok("v", "v")
    assert not crypto.token_ok("v", "w")
    assert not crypto.token_ok("v", None)
    assert not crypto.token_ok("", "")
