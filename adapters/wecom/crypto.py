"""WeCom callback crypto (WXBizMsgCrypt scheme), shared by the AI bot and self-built apps.

- `msg_signature = sha1(sorted(token, timestamp, nonce, ciphertext))`, compared in constant time.
- AES-256-CBC with `key = b64decode(EncodingAESKey + "=")` and `iv = key[:16]`.
- PKCS#7 padding to 32-byte blocks (not AES's 16), so padding is done by hand.
- Plaintext: 16 random bytes + 4-byte big-endian length + message + receive id.
  The receive id is "" for an in-house AI bot and the CorpID for a self-built app;
  a mismatch means the payload was made for someone else and is rejected.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os
import struct
from dataclasses import asdict, dataclass

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from adapters.wecom.aes_key import aes_key

_BLOCK = 32


class CryptoError(Exception):
    """Base for every verification failure; the message never contains key material."""


class SignatureError(CryptoError):
    pass


class DecryptError(CryptoError):
    pass


class ReceiveIdError(CryptoError):
    pass


def signature(token: str, timestamp: str, nonce: str, ciphertext: str) -> str:
    joined = "".join(sorted([token, timestamp, nonce, ciphertext]))
    return hashlib.sha1(joined.encode("utf-8")).hexdigest()


def _pad(data: bytes) -> bytes:
    n = _BLOCK - len(data) % _BLOCK
    return data + bytes([n]) * n


def _unpad(data: bytes) -> bytes:
    if not data:
        raise DecryptError("empty plaintext")
    n = data[-1]
    if not 1 <= n <= _BLOCK or n > len(data):
        raise DecryptError("bad padding")
    return data[:-n]


@dataclass(frozen=True)
class EncryptedReply:
    encrypt: str
    msgsignature: str
    timestamp: str
    nonce: str

    def to_json_dict(self) -> dict[str, object]:
        # The field names are the keys of WeCom's JSON reply sample; the AI-bot doc shows the timestamp
        # as a number.
        return asdict(self) | {"timestamp": int(self.timestamp)}


class WeComCrypto:
    def __init__(self, token: str, encoding_aes_key: str, receive_id: str = "") -> None:
        if not token:
            raise ValueError("WECOM_TOKEN is empty")
        self._token = token
        self._key = aes_key(encoding_aes_key)
        self._receive_id = receive_id.encode("utf-8")

    def __repr__(self) -> str:  # never print the token or key
        return "WeComCrypto(<redacted>)"

    # --- verification ---------------------------------------------------------------------
    def verify(self, msg_signature: str, timestamp: str, nonce: str, ciphertext: str) -> None:
        expected = signature(self._token, timestamp, nonce, ciphertext)
        if not hmac.compare_digest(expected.encode(), (msg_signature or "").lower().encode()):
            raise SignatureError("msg_signature does not match")

    def decrypt(self, ciphertext: str) -> bytes:
        """Decrypt and check the receive id; returns the message bytes."""
        try:
            raw = base64.b64decode(ciphertext, validate=True)
        except (binascii.Error, ValueError) as exc:
            raise DecryptError("ciphertext is not base64") from exc
        if not raw or len(raw) % 16:
            raise DecryptError("ciphertext length is not a multiple of the AES block")
        dec = Cipher(algorithms.AES(self._key), modes.CBC(self._key[:16])).decryptor()
        plain = _unpad(dec.update(raw) + dec.finalize())
        if len(plain) < 20:
            raise DecryptError("plaintext too short")
        (length,) = struct.unpack(">I", plain[16:20])
        if length > len(plain) - 20:
            raise DecryptError("message length out of bounds")
        message, receive_id = plain[20 : 20 + length], plain[20 + length :]
        if not hmac.compare_digest(receive_id, self._receive_id):
            raise ReceiveIdError("receive id does not match")
        return message

    def verify_and_decrypt(self, msg_signature: str, timestamp: str, nonce: str, ciphertext: str) -> bytes:
        self.verify(msg_signature, timestamp, nonce, ciphertext)
        return self.decrypt(ciphertext)

    # --- replies --------------------------------------------------------------------------
    def encrypt(self, message: bytes, *, random16: bytes | None = None) -> str:
        rnd = random16 if random16 is not None else os.urandom(16)
        if len(rnd) != 16:
            raise ValueError("random prefix must be 16 bytes")
        plain = _pad(rnd + struct.pack(">I", len(message)) + message + self._receive_id)
        enc = Cipher(algorithms.AES(self._key), modes.CBC(self._key[:16])).encryptor()
        return base64.b64encode(enc.update(plain) + enc.finalize()).decode("ascii")

    def encrypted_reply(self, message: bytes, timestamp: str, nonce: str) -> EncryptedReply:
        ciphertext = self.encrypt(message)
        return EncryptedReply(ciphertext, signature(self._token, timestamp, nonce, ciphertext), timestamp, nonce)
