"""The bare floor for bench/ack_bench.py: the least a webhook can do and stay correct.

A tiny Starlette app that checks the same Slack signature (slack_sdk's SignatureVerifier, the
same check the bot makes), Telegram's secret header, or Feishu's timestamp window and signature
(then decrypts the body, where Feishu keeps the event id), reads the event id, and does one Redis
round trip: a Lua script that sets the dedupe marker (SET NX EX) and, only if it was new, XADDs
the body to a stream. Nothing
else: no allowlist, no parsing beyond the event id, no logging, no metrics. The bot's ack path
is measured against this.

    python bench/ack_floor.py --port P --redis-url URL --prefix PFX --signing-secret S
"""
from __future__ import annotations

import argparse
import hmac
import json
import time

import redis.asyncio as aioredis
import uvicorn
from slack_sdk.signature import SignatureVerifier
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from adapters.feishu import crypto as feishu_crypto

# KEYS: dedupe marker, stream. ARGV: ttl, body. One round trip: dedupe and enqueue together.
_DEDUPE_XADD = """
if redis.call('SET', KEYS[1], '1', 'NX', 'EX', tonumber(ARGV[1])) then
  return redis.call('XADD', KEYS[2], '*', 'body', ARGV[2])
end
return false
"""


def floor_app(redis: aioredis.Redis, prefix: str, signing_secret: str, telegram_secret: str = "",
              feishu_encrypt_key: str = "") -> Starlette:
    verifier = SignatureVerifier(signing_secret)
    script = redis.register_script(_DEDUPE_XADD)
    stream = f"{{{prefix}}}:floor:jobs"
    expected = telegram_secret.encode()

    async def events(request: Request) -> Response:
        body = (await request.body()).decode("utf-8")
        if not verifier.is_valid(
            body=body,
            timestamp=request.headers.get("x-slack-request-timestamp", ""),
            signature=request.headers.get("x-slack-signature", ""),
        ):
            return Response(status_code=401)
        event_id = json.loads(body).get("event_id") or ""
        await script(keys=[f"{{{prefix}}}:floor:dedupe:{event_id}", stream], args=[600, body])
        return Response(status_code=200)

    async def telegram(request: Request) -> Response:
        # Telegram's check: the secret header, compared in constant time
        given = request.headers.get("x-telegram-bot-api-secret-token", "").encode()
        if not expected or not hmac.compare_digest(given, expected):
            return Response(status_code=403)
        body = await request.body()
        update_id = json.loads(body).get("update_id")
        await script(keys=[f"{{{prefix}}}:floor:dedupe:tg:{update_id}", stream], args=[600, body])
        return Response(status_code=200)

    async def feishu(request: Request) -> Response:
        body = await request.body()
        timestamp = request.headers.get("x-lark-request-timestamp", "")
        nonce = request.headers.get("x-lark-request-nonce", "")
        signature = request.headers.get("x-lark-signature", "")
        if not feishu_encrypt_key or not feishu_crypto.timestamp_fresh(timestamp, time.time(), 300) or \
                not feishu_crypto.signature_ok(timestamp, nonce, feishu_encrypt_key, body, signature):
            return Response(status_code=401)
        payload = json.loads(feishu_crypto.decrypt(feishu_encrypt_key, json.loads(body)["encrypt"]))
        event_id = payload.get("header", {}).get("event_id") or ""
        await script(keys=[f"{{{prefix}}}:floor:dedupe:fs:{event_id}", stream], args=[600, body])
        return Response(status_code=200)

    return Starlette(routes=[Route("/slack/events", events, methods=["POST"]),
                             Route("/telegram/webhook", telegram, methods=["POST"]),
                             Route("/feishu/events", feishu, methods=["POST"])])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--signing-secret", required=True)
    parser.add_argument("--telegram-secret", default="")
    parser.add_argument("--feishu-encrypt-key", default="")
    args = parser.parse_args()
    redis = aioredis.Redis.from_url(args.redis_url)
    app = floor_app(redis, args.prefix, args.signing_secret, args.telegram_secret, args.feishu_encrypt_key)
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    main()
