"""Feishu/Lark callback security: AES-256-CBC bodies, X-Lark-Signature, timestamp window, token.

Feishu encrypts every callback body with the app's Encrypt Key when one is set:
key = SHA-256(encrypt_key), body = base64(iv(16) || AES-256-CBC(PKCS#7(json))).
The signature covers timestamp + nonce + encrypt_key + the raw body bytes. The
SDK does not check how old a request is, so we add our own window; event_id
dedupe in ingress stops replays inside it.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import os

from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

_BLOCK = 16


class DecryptError(ValueError):
    """The body could not be decrypted with the configured Encrypt Key."""


def _key(encrypt_key: str) -> bytes:
    return hashlib.sha256(encrypt_key.encode("utf-8")).digest()


def decrypt(encrypt_key: str, encrypted_b64: str) -> bytes:
    """Decrypt an `{"encrypt": …}` value. Raises DecryptError on any malformed input."""
    try:
        raw = base64.b64decode(encrypted_b64, validate=True)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise DecryptError("not base64") from exc
    if len(raw) < 2 * _BLOCK or len(raw) % _BLOCK:
        raise DecryptError("bad ciphertext length")
    decryptor = Cipher(algorithms.AES(_key(encrypt_key)), modes.CBC(raw[:_BLOCK])).decryptor()
    padded = decryptor.update(raw[_BLOCK:]) + decryptor.finalize()
    unpadder = padding.PKCS7(_BLOCK * 8).unpadder()
    try:
        return unpadder.update(padded) + unpadder.finalize()
    except ValueError as exc:  # wrong key shows up as bad padding
        raise DecryptError("bad padding") from exc


def encrypt(encrypt_key: str, plaintext: bytes, iv: bytes | None = None) -> str:
    """The inverse of `decrypt`; used by the fake platform and tests."""
    iv = iv if iv is not None else os.urandom(_BLOCK)
    padder = padding.PKCS7(_BLOCK * 8).padder()
    padded = padder.update(plaintext) + padder.finalize()
    encryptor = Cipher(algorithms.AES(_key(encrypt_key)), modes.CBC(iv)).encryptor()
    return base64.b64encode(iv + encryptor.update(padded) + encryptor.finalize()).decode("ascii")


def signature(timestamp: str, nonce: str, encrypt_key: str, body: bytes) -> str:
    return hashlib.sha256((timestamp + nonce + encrypt_key).encode("utf-8") + body).hexdigest()


def signature_ok(timestamp: str, nonce: str, encrypt_key: str, body: bytes, given: str) -> bool:
    expected = signature(timestamp, nonce, encrypt_key, body)
    return hmac.compare_digest(expected.encode("ascii"), given.encode("utf-8", "replace"))


def timestamp_fresh(timestamp: str, now: float, window_seconds: float) -> bool:
    """X-Lark-Request-Timestamp is unix seconds; anything unparsable is stale."""
    try:
        sent = float(timestamp)
    except (TypeError, ValueError):
        return False
    return abs(now - sent) <= window_seconds


def token_ok(expected: str, given: object) -> bool:
    if not expected or not isinstance(given, str) or not given:
        return False
    return hmac.compare_digest(expected.encode("utf-8"), given.encode("utf-8"))
