"""Open and verify one webhook callback body (events and card actions share the scheme).

Order matters: the signature (over the raw bytes) and the timestamp window are
checked before anything is decrypted or parsed further, then the verification
token inside the decrypted payload. `url_verification` carries no signature (the
SDK skips the check too), so it is answered after the token check alone; every
other plaintext body is refused while an Encrypt Key is configured.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping

from adapters.feishu import crypto

URL_VERIFICATION = "url_verification"
H_TIMESTAMP = "x-lark-request-timestamp"
H_NONCE = "x-lark-request-nonce"
H_SIGNATURE = "x-lark-signature"


@dataclass(frozen=True)
class CallbackSecrets:
    encrypt_key: str
    verification_token: str
    window_seconds: float = 300.0

    def __repr__(self) -> str:  # never print the secrets
        return f"CallbackSecrets(window_seconds={self.window_seconds})"


class Rejected(Exception):
    """A callback we refuse; `status` is the HTTP status to answer with, `reason` is safe to log."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def _token_of(payload: dict[str, Any]) -> object:
    header = payload.get("header")
    if isinstance(header, dict) and "token" in header:
        return header.get("token")
    return payload.get("token")  # v1 events and url_verification


def is_url_verification(payload: dict[str, Any]) -> bool:
    return payload.get("type") == URL_VERIFICATION


def open_callback(body: bytes, headers: Mapping[str, str], secrets: CallbackSecrets, now: float) -> dict[str, Any]:
    """The verified plaintext payload, or Rejected (400 malformed, 401 signature/time, 403 token)."""
    signed = False
    signature = headers.get(H_SIGNATURE)
    if signature is not None and secrets.encrypt_key:
        timestamp, nonce = headers.get(H_TIMESTAMP, ""), headers.get(H_NONCE, "")
        if not crypto.timestamp_fresh(timestamp, now, secrets.window_seconds):
            raise Rejected(401, "stale or missing timestamp")
        if not crypto.signature_ok(timestamp, nonce, secrets.encrypt_key, body, signature):
            raise Rejected(401, "bad signature")
        signed = True
    try:
        outer = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise Rejected(400, "body is not JSON") from None
    if not isinstance(outer, dict):
        raise Rejected(400, "body is not a JSON object")
    if "encrypt" in outer:
        if not secrets.encrypt_key:
            raise Rejected(400, "encrypted body but no Encrypt Key configured")
        if not isinstance(outer["encrypt"], str):
            raise Rejected(400, "encrypt is not a string")
        try:
            payload = json.loads(crypto.decrypt(secrets.encrypt_key, outer["encrypt"]))
        except crypto.DecryptError:
            raise Rejected(400, "cannot decrypt body") from None
        except (UnicodeDecodeError, ValueError):
            raise Rejected(400, "decrypted body is not JSON") from None
        if not isinstance(payload, dict):
            raise Rejected(400, "decrypted body is not a JSON object")
    else:
        payload = outer
    if not crypto.token_ok(secrets.verification_token, _token_of(payload)):
        raise Rejected(403, "wrong verification token")
    if is_url_verification(payload):
        if not isinstance(payload.get("challenge"), str):
            raise Rejected(400, "url_verification without a challenge")
        return payload
    if secrets.encrypt_key and not signed:
        raise Rejected(401, "missing signature")
    return payload
