"""WeCom callback crypto, checked against WeCom's own published sample (WXBizMsgCrypt)."""
from __future__ import annotations

import base64
import struct

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from adapters.wecom.crypto import (
    DecryptError,
    ReceiveIdError,
    SignatureError,
    WeComCrypto,
    aes_key,
    signature,
)

# WeCom's official sample (token, EncodingAESKey, CorpID) and its two requests.
TOKEN = "QDG6eK"
AES_KEY = "jWmYm7qr5nMoAUwZRjGtBxmz3KA1tkAj3ykkR6q2B2C"
CORP_ID = "wx5823bf96d3bd56c7"
VERIFY_TS, VERIFY_NONCE = "1409659589", "263014780"
VERIFY_ECHOSTR = "P9nAzCzyDtyTWESHep1vC5X9xho/qYX3Zpb4yKa9SKld1DsH3Iyt3tP3zNdtp+4RPcs8TgAE7OaBO+FZXvnaqQ=="
VERIFY_SIGNATURE = "5c45ff5e21c57e6ad56bac8758b79b1d9ac89fd3"
POST_TS, POST_NONCE = "1409659813", "1372623149"
POST_SIGNATURE = "477715d11cdb4164915debcba66cb864d751f3e6"
POST_ENCRYPT = (
    "RypEvHKD8QQKFhvQ6QleEB4J58tiPdvo+rtK1I9qca6aM/wvqnLSV5zEPeusUiX5L5X/0lWfrf0QADHHhGd3QczcdCUpj911L3vg3W/sYYvuJTs3TUUk"
    "SUXxaccAS0qhxchrRYt66wiSpGLYL42aM6A8dTT+6k4aSknmPj48kzJs8qLjvd4Xgpue06DOdnLxAUHzM6+kDZ+HMZfJYuR+LtwGc2hgf5gsijff0ekU"
    "NXZiqATP7PF5mZxZ3Izoun1s4zG4LUMnvw2r+KqCKIw+3IQH03v+BCA9nMELNqbSf6tiWSrXJB3LAVGUcallcrw8V2t9EL4EhzJWrQUax5wLVMNS0+rU"
    "PA3k22Ncx4XXZS9o0MBH27Bo6BpNelZpS+/uh9KsNlY6bHCmJU9p8g7m3fVKn28H3KDYA5Pl/T8Z1ptDAVe0lXdQ2YoyyH2uyPIGHBZZIs2pDBS8R07+"
    "qN+E7Q=="
)


def test_official_url_verification_vector() -> None:
    assert signature(TOKEN, VERIFY_TS, VERIFY_NONCE, VERIFY_ECHOSTR) == VERIFY_SIGNATURE
    crypto = WeComCrypto(TOKEN, AES_KEY, CORP_ID)
    assert crypto.verify_and_decrypt(VERIFY_SIGNATURE, VERIFY_TS, VERIFY_NONCE, VERIFY_ECHOSTR) == b"1616140317555161061"


def test_official_message_vector() -> None:
    assert signature(TOKEN, POST_TS, POST_NONCE, POST_ENCRYPT) == POST_SIGNATURE
    plain = WeComCrypto(TOKEN, AES_KEY, CORP_ID).verify_and_decrypt(POST_SIGNATURE, POST_TS, POST_NONCE, POST_ENCRYPT)
    assert b"<FromUserName><![CDATA[mycreate]]></FromUserName>" in plain
    assert b"<Content><![CDATA[hello]]></Content>" in plain
    assert b"<MsgId>4561255354251345929</MsgId>" in plain


def test_receive_id_must_match() -> None:
    # The AI bot's receive id is "", so the sample (made for a CorpID) is refused by an AI-bot decryptor.
    with pytest.raises(ReceiveIdError):
        WeComCrypto(TOKEN, AES_KEY, "").decrypt(VERIFY_ECHOSTR)
    with pytest.raises(ReceiveIdError):
        WeComCrypto(TOKEN, AES_KEY, "wx0000000000000000").decrypt(VERIFY_ECHOSTR)


def test_wrong_signature_is_refused() -> None:
    crypto = WeComCrypto(TOKEN, AES_KEY, CORP_ID)
    with pytest.raises(SignatureError):
        crypto.verify("0" * 40, VERIFY_TS, VERIFY_NONCE, VERIFY_ECHOSTR)
    with pytest.raises(SignatureError):  # same signature, another nonce
        crypto.verify(VERIFY_SIGNATURE, VERIFY_TS, "1", VERIFY_ECHOSTR)
    with pytest.raises(SignatureError):
        WeComCrypto("other-token", AES_KEY, CORP_ID).verify(VERIFY_SIGNATURE, VERIFY_TS, VERIFY_NONCE, VERIFY_ECHOSTR)


def test_uppercase_signature_is_accepted() -> None:
    WeComCrypto(TOKEN, AES_KEY, CORP_ID).verify(VERIFY_SIGNATURE.upper(), VERIFY_TS, VERIFY_NONCE, VERIFY_ECHOSTR)


def test_round_trip_ai_bot_with_empty_receive_id() -> None:
    crypto = WeComCrypto("tok", AES_KEY, "")
    message = '{"msgtype":"text","text":{"content":"你好 vllm-ascend"}}'.encode()
    reply = crypto.encrypted_reply(message, "1700000000", "abc")
    assert reply.msgsignature == signature("tok", "1700000000", "abc", reply.encrypt)
    assert crypto.verify_and_decrypt(reply.msgsignature, "1700000000", "abc", reply.encrypt) == message
    assert reply.to_json_dict() == {
        "encrypt": reply.encrypt, "msgsignature": reply.msgsignature, "timestamp": 1700000000, "nonce": "abc"
    }


@pytest.mark.parametrize("size", [0, 1, 11, 12, 31, 32, 33, 100])
def test_padding_is_pkcs7_to_32_byte_blocks(size: int) -> None:
    crypto = WeComCrypto("tok", AES_KEY, "")
    enc = crypto.encrypt(b"x" * size, random16=b"r" * 16)
    key = aes_key(AES_KEY)
    dec = Cipher(algorithms.AES(key), modes.CBC(key[:16])).decryptor()
    plain = dec.update(base64.b64decode(enc)) + dec.finalize()
    assert len(plain) % 32 == 0
    pad = plain[-1]
    assert 1 <= pad <= 32 and plain.endswith(bytes([pad]) * pad)
    assert (16 + 4 + size + pad) == len(plain)
    assert struct.unpack(">I", plain[16:20])[0] == size
    assert crypto.decrypt(enc) == b"x" * size


def test_tampered_or_garbage_ciphertext_is_a_clean_error() -> None:
    crypto = WeComCrypto(TOKEN, AES_KEY, CORP_ID)
    for bad in ["", "not base64!!", base64.b64encode(b"short").decode(), base64.b64encode(b"\0" * 32).decode()]:
        with pytest.raises((DecryptError, ReceiveIdError)):
            crypto.decrypt(bad)
    raw = bytearray(base64.b64decode(VERIFY_ECHOSTR))
    raw[-1] ^= 0xFF  # breaks the padding or the receive id, never returns garbage as valid
    with pytest.raises((DecryptError, ReceiveIdError)):
        crypto.decrypt(base64.b64encode(bytes(raw)).decode())


def test_bad_keys_are_refused_at_construction() -> None:
    with pytest.raises(ValueError):
        WeComCrypto(TOKEN, AES_KEY[:-1], "")
    with pytest.raises(ValueError):
        WeComCrypto(TOKEN, "!" * 43, "")
    with pytest.raises(ValueError):
        WeComCrypto("", AES_KEY, "")


def test_repr_hides_secrets() -> None:
    assert TOKEN not in repr(WeComCrypto(TOKEN, AES_KEY, ""))
    assert AES_KEY not in repr(WeComCrypto(TOKEN, AES_KEY, ""))
