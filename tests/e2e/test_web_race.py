"""Two real `python -m bot web` processes receive the same Telegram updates at once (a platform
retry landing on another replica): every update is enqueued exactly once."""
from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.fake_telegram import TOKEN, FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
SECRET = "race-secret-0123456789"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _update(update_id: int) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "chat": {"id": 1000 + update_id, "type": "private"},
            "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
            "text": f"vllm-ascend question {update_id}",
        },
    }


async def _wait_ready(client: httpx.AsyncClient, url: str) -> None:
    for _ in range(150):
        try:
            if (await client.get(url + "/healthz")).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        await asyncio.sleep(0.1)
    raise TimeoutError(url)


async def test_two_web_replicas_racing_on_the_same_updates_enqueue_each_once(redis_url, keys, redis, tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TELEGRAM_", "SLACK_", "FEISHU_", "WECOM_", "ANTHROPIC_"))}
    env.update(
        REDIS_URL=redis_url,
        REDIS_PREFIX=keys.prefix,
        ALLOW_PUBLIC_PLATFORMS="telegram",  # the test's own fake is the only sender
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_WEBHOOK_SECRET=SECRET,
        TELEGRAM_WEBHOOK_URL="https://bot.example.invalid/telegram/webhook",
        DATA_DIR=str(tmp_path),
    )
    async with FakeTelegram() as telegram:
        env["TELEGRAM_API_URL"] = telegram.api_url
        await _race(env, redis, keys)


async def _race(env: dict[str, str], redis, keys) -> None:
    ports = [_free_port(), _free_port()]
    procs = [
        subprocess.Popen([sys.executable, "-m", "bot", "web", "--port", str(p)], cwd=ROOT, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for p in ports
    ]
    try:
        async with httpx.AsyncClient(timeout=10) as client:
            urls = [f"http://127.0.0.1:{p}" for p in ports]
            for url in urls:
                await _wait_ready(client, url)
            headers = {"X-Telegram-Bot-Api-Secret-Token": SECRET}

            async def deliver(url: str, update_id: int) -> int:
                response = await client.post(url + "/telegram/webhook", json=_update(update_id), headers=headers)
                return response.status_code

            statuses = await asyncio.gather(*(deliver(url, i) for i in range(1, 101) for url in urls))
        assert set(statuses) == {200}
        assert await redis.xlen(keys.jobs) == 100
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=20)
