"""`web` and `worker` started apart, without REDIS_URL, on one DATA_DIR (issue 25 item 4): they share one
embedded Redis, a question posted to web is answered by worker, and stopping the process that started
the Redis (Ctrl-C in its terminal) leaves it running for the other."""
from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import redis

from bot.embedded_redis import answers, configured_address, server_url
from tests.support.fake_telegram import TOKEN, FakeTelegram

ROOT = Path(__file__).resolve().parents[2]
SECRET = "apart-secret-0123456789"
WEBHOOK = "/telegram/webhook"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _update(update_id: int, chat_id: int) -> dict:
    return {
        "update_id": update_id,
        "message": {
            "message_id": update_id,
            "date": int(time.time()),
            "chat": {"id": chat_id, "type": "private"},
            "from": {"id": 7, "is_bot": False, "first_name": "Ann"},
            "text": "How do I install vllm-ascend on Atlas 800I A2?",
        },
    }


class Bot:
    """One `python -m bot <command>` in its own process group, as a terminal starts a job."""

    def __init__(self, command: str, env: dict[str, str], log: Path, port: int | None = None) -> None:
        args = [sys.executable, "-m", "bot", command] + (["--port", str(port)] if port else [])
        self.log = log
        self._out = log.open("wb")
        self.proc = subprocess.Popen(args, cwd=ROOT, env=env, stdout=self._out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.url = f"http://127.0.0.1:{port}" if port else ""

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    async def wait_for_line(self, text: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.output():
            assert self.proc.poll() is None, f"exited early:\n{self.output()}"
            assert time.monotonic() < deadline, f"no {text!r} in:\n{self.output()}"
            await asyncio.sleep(0.1)

    def ctrl_c(self) -> int:
        os.killpg(self.proc.pid, signal.SIGINT)  # what the terminal sends its foreground job
        code = self.proc.wait(timeout=30)
        self._out.close()
        return code


async def _wait_ready(bot: Bot) -> None:
    async with httpx.AsyncClient(timeout=2) as client:
        for _ in range(300):
            try:
                if (await client.get(bot.url + "/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert bot.proc.poll() is None, f"exited early:\n{bot.output()}"
            await asyncio.sleep(0.1)
    raise TimeoutError(bot.output())


def _stop_leftover_redis(data_dir: Path) -> None:
    """A failed run must not leave a server behind (it runs in its own session)."""
    address = configured_address(data_dir)
    if address is not None and answers(*address):
        password = (data_dir / "password").read_text().strip()
        with contextlib.suppress(redis.RedisError):
            redis.Redis.from_url(server_url(password, *address)).shutdown(nosave=True)


async def _ask(bot: Bot, telegram: FakeTelegram, update_id: int) -> None:
    chat_id = 5000 + update_id
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(bot.url + WEBHOOK, json=_update(update_id, chat_id),
                                     headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
    assert response.status_code == 200
    await telegram.wait_for(lambda: any("vllm" in telegram.visible(m).lower() for m in telegram.chat_messages(chat_id)),
                            timeout=60)


async def test_web_and_worker_apart_share_one_embedded_redis_and_answer(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("REDIS_URL", "TELEGRAM_", "SLACK_", "FEISHU_", "WECOM_", "ANTHROPIC_", "OPENAI_"))}
    env.update(
        DATA_DIR=str(tmp_path / "data"),
        REPOS_DIR=str(tmp_path / "repos"),
        ALLOW_PUBLIC_PLATFORMS="telegram",  # the test's own fake is the only sender
        TELEGRAM_BOT_TOKEN=TOKEN,
        TELEGRAM_WEBHOOK_SECRET=SECRET,
        TELEGRAM_WEBHOOK_URL="https://bot.example.invalid/telegram/webhook",
    )
    async with FakeTelegram() as telegram:
        env["TELEGRAM_API_URL"] = telegram.api_url
        worker = Bot("worker", env, tmp_path / "worker.log")
        web = None
        try:
            # the worker first: the order in which a second embedded server used to strand every job
            await worker.wait_for_line("started an embedded redis-server")
            web = Bot("web", env, tmp_path / "web.log", _free_port())
            await _wait_ready(web)
            assert "using the embedded redis-server another bot process started" in web.output()
            await _ask(web, telegram, 1)

            # the process that started Redis stops (Ctrl-C in its terminal): Redis stays for web
            assert worker.ctrl_c() == 0
            assert "left running" in worker.output()
            address = configured_address(tmp_path / "data" / "redis")
            assert address is not None and answers(*address)
            worker = Bot("worker", env, tmp_path / "worker2.log")
            await worker.wait_for_line("Adapters enabled")
            assert "using the embedded redis-server" in worker.output()
            await _ask(web, telegram, 2)

            # the last one out stops it
            assert web.ctrl_c() == 0 and "left running" in web.output()
            assert worker.ctrl_c() == 0 and "stopped (no other bot process uses it)" in worker.output()
            assert not answers(*address)
        finally:
            for bot in (web, worker):
                if bot is not None and bot.proc.poll() is None:
                    bot.proc.kill()
                    bot.proc.wait()
            _stop_leftover_redis(tmp_path / "data" / "redis")
