"""Open and verify one webhook callback body (events and card actions share the scheme).

Order matters. With an Encrypt Key configured and an X-Lark-Signature header present, the
timestamp window and the signature (over the raw bytes) are checked before the body is parsed
or decrypted, then the verification token inside the decrypted payload. `url_verification`
may come without a signature (the SDK skips the check for it too), so an unsigned body is still
decrypted, and is answered only if it is a url_verification with the right token; every other
unsigned body is refused while an Encrypt Key is configured.

Decrypting what anyone may send is a CBC padding oracle if bad padding answers differently from
good padding with a wrong payload. So every failure that depends on a secret (timestamp,
signature, padding, the decrypted JSON, the token) raises the same Rejected: one status, one
body; only the logged reason differs. Failures of the outer, plaintext JSON reveal nothing and
answer 400, as does a body nested deeply enough to crash a recursive parser.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from adapters.common import json_body
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
    """A callback we refuse: answer `status` with `public`; `reason` is for the log (safe to log)."""

    def __init__(self, status: int, reason: str, public: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.public = public if public is not None else reason


UNAUTHENTICATED_STATUS = 401
UNAUTHENTICATED_BODY = "unauthenticated"


def unauthenticated(reason: str) -> Rejected:
    """The one answer for every secret-dependent failure, whatever `reason` (logged only) says."""
    return Rejected(UNAUTHENTICATED_STATUS, reason, public=UNAUTHENTICATED_BODY)


def _token_of(payload: dict[str, Any]) -> object:
    header = payload.get("header")
    if isinstance(header, dict) and "token" in header:
        return header.get("token")
    return payload.get("token")  # v1 events and url_verification


def is_url_verification(payload: dict[str, Any]) -> bool:
    return payload.get("type") == URL_VERIFICATION


def open_callback(body: bytes, headers: Mapping[str, str], secrets: CallbackSecrets, now: float) -> dict[str, Any]:
    """The verified plaintext payload, or Rejected: 400 for a malformed outer body, `unauthenticated`
    for anything that fails a secret, 400 for a url_verification (right token) without a challenge."""
    signed = False
    signature = headers.get(H_SIGNATURE)
    if signature is not None and secrets.encrypt_key:
        timestamp, nonce = headers.get(H_TIMESTAMP, ""), headers.get(H_NONCE, "")
        if not crypto.timestamp_fresh(timestamp, now, secrets.window_seconds):
            raise unauthenticated("stale or missing timestamp")
        if not crypto.signature_ok(timestamp, nonce, secrets.encrypt_key, body, signature):
            raise unauthenticated("bad signature")
        signed = True
    outer = _json_object(body)
    if "encrypt" in outer:
        if not secrets.encrypt_key:
            raise Rejected(400, "encrypted body but no Encrypt Key configured")
        if not isinstance(outer["encrypt"], str):
            raise Rejected(400, "encrypt is not a string")
        payload = _decrypted_object(secrets.encrypt_key, outer["encrypt"])
    else:
        payload = outer
    if not crypto.token_ok(secrets.verification_token, _token_of(payload)):
        raise unauthenticated("wrong verification token")
    if is_url_verification(payload):
        if not isinstance(payload.get("challenge"), str):
            raise Rejected(400, "url_verification without a challenge")
        return payload
    if secrets.encrypt_key and not signed:
        raise unauthenticated("missing signature")
    return payload


def _json_object(body: bytes) -> dict[str, Any]:
    """The outer body: plaintext the sender wrote, so saying what is wrong with it reveals nothing."""
    try:
        outer = json_body.loads(body)
    except json_body.BadJSON as exc:
        raise Rejected(400, f"body: {exc}") from None
    if not isinstance(outer, dict):
        raise Rejected(400, "body is not a JSON object")
    return outer


def _decrypted_object(encrypt_key: str, encrypted: str) -> dict[str, Any]:
    """Decrypt and parse; every failure is the same `unauthenticated` (no padding oracle)."""
    try:
        payload = json_body.loads(crypto.decrypt(encrypt_key, encrypted))
    except crypto.DecryptError:
        raise unauthenticated("cannot decrypt body") from None
    except json_body.BadJSON as exc:
        raise unauthenticated(f"decrypted body: {exc}") from None
    if not isinstance(payload, dict):
        raise unauthenticated("decrypted body is not a JSON object")
    return payload
