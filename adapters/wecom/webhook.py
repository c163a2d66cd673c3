"""API mode: GET and POST /wecom/callback (Starlette only translates requests and responses).

GET answers WeCom's URL verification with the decrypted echostr, as bare text.
POST takes `{"encrypt": ...}`, verifies and decrypts it, hands the callback to
the shared inbound path and answers at once with an encrypted passive reply
(or an empty body). Nothing slow happens here: the answer is produced by the
worker and pulled by WeCom's refresh callbacks.
"""
from __future__ import annotations

import json
import logging
import secrets
import time

from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from adapters.common import json_body
from adapters.common.body import BodyTooLarge, read_capped_body
from adapters.common.ingress import REDIS_DOWN, unavailable

from .crypto import CryptoError, ReceiveIdError, WeComCrypto
from .inbound import InboundHandler, PassiveReply
from .parse import PLATFORM, PayloadError, parse_callback

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 256 * 1024
PATH = "/wecom/callback"


def _reject(status: int, reason: str) -> Response:
    return PlainTextResponse(reason, status_code=status)


class WebhookEndpoint:
    def __init__(
        self, crypto: WeComCrypto, inbound: InboundHandler, *, bot_name: str | None, max_clock_skew_seconds: int
    ) -> None:
        self._crypto = crypto
        self._inbound = inbound
        self._bot_name = bot_name
        self._skew = max_clock_skew_seconds

    def routes(self) -> list[Route]:
        return [Route(PATH, self.verify_url, methods=["GET"]), Route(PATH, self.callback, methods=["POST"])]

    def _params(self, request: Request) -> tuple[str, str, str] | Response:
        q = request.query_params
        signature, timestamp, nonce = q.get("msg_signature", ""), q.get("timestamp", ""), q.get("nonce", "")
        if not (signature and timestamp and nonce):
            return _reject(400, "missing msg_signature, timestamp or nonce")
        try:
            ts = int(timestamp)
        except ValueError:
            return _reject(400, "bad timestamp")
        if self._skew and abs(time.time() - ts) > self._skew:
            return _reject(403, "timestamp outside the allowed window")
        return signature, timestamp, nonce

    async def verify_url(self, request: Request) -> Response:
        params = self._params(request)
        if isinstance(params, Response):
            return params
        # A '+' that reached us unencoded was decoded to a space; base64 has no spaces.
        echostr = request.query_params.get("echostr", "").replace(" ", "+")
        if not echostr:
            return _reject(400, "missing echostr")
        try:
            plain = self._crypto.verify_and_decrypt(*params, echostr)
        except CryptoError as exc:
            log.warning("wecom url verification rejected: %s", type(exc).__name__)
            return _reject(403, "verification failed")
        # Exactly the plaintext: no quotes, BOM or newline.
        return Response(plain, media_type="text/plain")

    async def callback(self, request: Request) -> Response:
        params = self._params(request)
        if isinstance(params, Response):
            return params
        try:
            raw = await read_capped_body(request, MAX_BODY_BYTES)
        except BodyTooLarge:
            return _reject(413, "body too large")
        # Parsed before the signature check (the signature covers the ciphertext inside), so it must
        # not be able to crash: json_body turns a deeply nested body into a ValueError, hence a 400.
        try:
            envelope = json_body.loads(raw)
            ciphertext = envelope["encrypt"]
            if not isinstance(ciphertext, str):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            return _reject(400, "expected JSON {\"encrypt\": ...}")
        try:
            plain = self._crypto.verify_and_decrypt(*params, ciphertext)
        except ReceiveIdError:
            log.warning("wecom callback rejected: receive id mismatch")
            return _reject(403, "verification failed")
        except CryptoError as exc:
            log.warning("wecom callback rejected: %s", type(exc).__name__)
            return _reject(403, "verification failed")
        try:
            callback = parse_callback(json_body.loads(plain), self._bot_name)
        except (ValueError, PayloadError) as exc:  # json_body.BadJSON is a ValueError
            log.warning("wecom callback payload rejected: %s", exc)
            return _reject(400, "malformed callback")
        try:
            reply = await self._inbound.handle(callback, mode="webhook")
        except REDIS_DOWN as exc:
            return unavailable(PLATFORM, exc)
        return self._encrypted(reply)

    def _encrypted(self, reply: PassiveReply | None) -> Response:
        if reply is None:
            return Response(b"", status_code=200)  # "received, no reply"
        body = json.dumps(reply.body, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        sealed = self._crypto.encrypted_reply(body, str(int(time.time())), secrets.token_hex(8))
        return JSONResponse(sealed.to_json_dict())
