"""One validation (issue 25 item 3): `doctor` and a refused start run the same per-platform check
(adapters/<platform>/settings.py `check_settings`) and say the same words about every invalid
configuration, naming the mode the values select and every missing or invalid variable."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from adapters.base import AdapterDeps
from bot.doctor import run_doctor
from bot.server import run_server
from bot.settings import Settings
from bot.wiring import build_adapters, platform_checks
from tests.support.cli import run_bot_here

ROOT = Path(__file__).resolve().parents[2]
TELEGRAM_TOKEN = "123456:" + "A" * 35
AES_KEY = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG"  # 43 base64 characters
FEISHU_WEBHOOK = {"feishu_app_id": "cli_a1b2c3", "feishu_app_secret": "s", "feishu_encrypt_key": "e",
                  "feishu_verification_token": "v"}

# (platform, values, the mode they select, words the refusal must contain: each bad variable named)
INVALID = [
    # Slack
    ("slack", {"slack_signing_secret": "s"}, "Events API webhook", ["SLACK_BOT_TOKEN is not set"]),
    ("slack", {"slack_bot_token": "xoxb-1"}, "Events API webhook", ["SLACK_SIGNING_SECRET is not set"]),
    ("slack", {"slack_app_token": "xapp-1"}, "socket mode", ["SLACK_BOT_TOKEN is not set"]),
    ("slack", {"slack_bot_token": "xoxp-user-token", "slack_signing_secret": "s"}, "Events API webhook",
     ["SLACK_BOT_TOKEN must be the Bot User OAuth Token"]),
    ("slack", {"slack_bot_token": "xoxb-1", "slack_app_token": "xoxb-pasted-twice"}, "socket mode",
     ["SLACK_APP_TOKEN must be an app-level token"]),
    ("slack", {"slack_bot_token": "xoxb-1", "slack_signing_secret": "s", "slack_api_url": "slack.com/api/"},
     "Events API webhook", ["SLACK_API_URL must be"]),
    ("slack", {"slack_bot_token": "xoxp-1", "slack_app_token": "xoxb-2", "slack_api_url": "ftp://x"}, "socket mode",
     ["SLACK_BOT_TOKEN must be", "SLACK_APP_TOKEN must be", "SLACK_API_URL must be"]),
    # Telegram
    ("telegram", {"telegram_bot_token": "not-a-token"}, "long polling", ["TELEGRAM_BOT_TOKEN is malformed"]),
    ("telegram", {"telegram_bot_token": TELEGRAM_TOKEN, "telegram_webhook_url": "https://bot.example.com/telegram/webhook"},
     "webhook", ["TELEGRAM_WEBHOOK_SECRET is not set"]),
    ("telegram", {"telegram_bot_token": TELEGRAM_TOKEN, "telegram_webhook_url": "https://bot.example.com/tg",
                  "telegram_webhook_secret": "has spaces!"}, "webhook", ["TELEGRAM_WEBHOOK_SECRET must be 1-256 characters"]),
    ("telegram", {"telegram_bot_token": TELEGRAM_TOKEN, "telegram_webhook_url": "http://bot.example.com/tg",
                  "telegram_webhook_secret": "ok_secret"}, "webhook", ["TELEGRAM_WEBHOOK_URL must be a https:// URL"]),
    ("telegram", {"telegram_bot_token": TELEGRAM_TOKEN, "telegram_api_url": "api.telegram.org/bot"}, "long polling",
     ["TELEGRAM_API_URL must be"]),
    ("telegram", {"telegram_bot_token": "12:short", "telegram_webhook_url": "bot.example.com"}, "webhook",
     ["TELEGRAM_BOT_TOKEN is malformed", "TELEGRAM_WEBHOOK_URL must be", "TELEGRAM_WEBHOOK_SECRET is not set"]),
    # Feishu
    ("feishu", {"feishu_app_id": "cli_a1b2c3", "feishu_app_secret": "s"}, "webhook",
     ["FEISHU_ENCRYPT_KEY is not set", "FEISHU_VERIFICATION_TOKEN is not set", "FEISHU_MODE=ws"]),
    ("feishu", {**FEISHU_WEBHOOK, "feishu_encrypt_key": None}, "webhook", ["FEISHU_ENCRYPT_KEY is not set"]),
    ("feishu", {**FEISHU_WEBHOOK, "feishu_verification_token": None}, "webhook", ["FEISHU_VERIFICATION_TOKEN is not set"]),
    ("feishu", {"feishu_app_id": "cli_a1b2c3", "feishu_mode": "ws"}, "long connection", ["FEISHU_APP_SECRET is not set"]),
    ("feishu", {"feishu_app_secret": "s", "feishu_mode": "ws"}, "long connection", ["FEISHU_APP_ID is not set"]),
    ("feishu", {**FEISHU_WEBHOOK, "feishu_app_id": "a1b2c3d4e5"}, "webhook", ["FEISHU_APP_ID must be the app's App ID"]),
    ("feishu", {**FEISHU_WEBHOOK, "feishu_api_url": "open.feishu.cn"}, "webhook", ["FEISHU_API_URL must be"]),
    # WeCom
    ("wecom", {"wecom_token": "t"}, "callback webhook", ["WECOM_ENCODING_AES_KEY is not set"]),
    ("wecom", {"wecom_encoding_aes_key": AES_KEY}, "callback webhook", ["WECOM_TOKEN is not set"]),
    ("wecom", {"wecom_token": "t", "wecom_encoding_aes_key": AES_KEY[:-1]}, "callback webhook",
     ["WECOM_ENCODING_AES_KEY must be 43 characters"]),
    ("wecom", {"wecom_token": "t", "wecom_encoding_aes_key": AES_KEY + "H"}, "callback webhook",
     ["WECOM_ENCODING_AES_KEY must be 43 characters"]),
    ("wecom", {"wecom_token": "t", "wecom_encoding_aes_key": AES_KEY[:-1] + "!"}, "callback webhook",
     ["WECOM_ENCODING_AES_KEY is not valid base64"]),
    # long-connection keys with the default webhook mode: both callback keys named, and the switch
    ("wecom", {"wecom_bot_id": "bot1", "wecom_bot_secret": "s"}, "callback webhook",
     ["WECOM_TOKEN is not set", "WECOM_ENCODING_AES_KEY is not set", "set WECOM_MODE=ws"]),
    ("wecom", {"wecom_mode": "ws", "wecom_token": "t", "wecom_encoding_aes_key": AES_KEY}, "long connection",
     ["WECOM_BOT_ID is not set", "WECOM_BOT_SECRET is not set", "set WECOM_MODE=webhook"]),
    ("wecom", {"wecom_mode": "ws", "wecom_bot_id": "bot1"}, "long connection", ["WECOM_BOT_SECRET is not set"]),
    ("wecom", {"wecom_mode": "ws", "wecom_bot_id": "bot1", "wecom_bot_secret": "s",
               "wecom_ws_url": "https://openws.work.weixin.qq.com"}, "long connection", ["WECOM_WS_URL must be a wss:// or ws://"]),
    ("wecom", {"wecom_token": "t", "wecom_encoding_aes_key": AES_KEY, "wecom_api_url": "qyapi.weixin.qq.com"},
     "callback webhook", ["WECOM_API_URL must be"]),
]

VALID = [
    ("slack", {"slack_bot_token": "xoxb-1", "slack_signing_secret": "s"}, "Events API webhook"),
    ("slack", {"slack_bot_token": "xoxb-1", "slack_app_token": "xapp-1"}, "socket mode"),
    ("telegram", {"telegram_bot_token": TELEGRAM_TOKEN}, "long polling"),
    ("telegram", {"telegram_bot_token": TELEGRAM_TOKEN, "telegram_webhook_url": "https://bot.example.com/tg",
                  "telegram_webhook_secret": "ok_secret"}, "webhook"),
    ("feishu", FEISHU_WEBHOOK, "webhook"),
    ("feishu", {"feishu_app_id": "cli_a1b2c3", "feishu_app_secret": "s", "feishu_mode": "ws"}, "long connection"),
    ("wecom", {"wecom_token": "t", "wecom_encoding_aes_key": AES_KEY}, "callback webhook"),
    ("wecom", {"wecom_mode": "ws", "wecom_bot_id": "bot1", "wecom_bot_secret": "s"}, "long connection"),
]


def settings(tmp_path: Path, **values: object) -> Settings:
    base: dict[str, object] = {
        "redis_url": "redis://127.0.0.1:1/0",  # nothing listens: neither side may need Redis to judge the values
        "data_dir": tmp_path / "data",
        "repos_dir": tmp_path / "repos",
        "anthropic_api_key": None,
        "allow_public": True,  # the access policy is another check (test_access_startup.py)
    }
    return Settings(_env_file=None, **{**base, **values})  # type: ignore[arg-type]


async def doctor_lines(values: Settings, capsys: pytest.CaptureFixture[str]) -> list[str]:
    await run_doctor(values)
    return capsys.readouterr().out.splitlines()


async def refused_start_lines(values: Settings, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What `serve` prints when it refuses to start (its real code path, stopped before any network)."""
    assert await run_server(values, "serve") == 2
    err = capsys.readouterr().err.splitlines()
    return [line.removeprefix("configuration error: ") for line in err if line.startswith("configuration error: ")]


def test_every_platform_has_at_least_four_invalid_cases_and_every_mode_is_covered() -> None:
    for name in ("slack", "telegram", "feishu", "wecom"):
        assert sum(case[0] == name for case in INVALID) >= 4, name
        modes = {case[2] for case in INVALID if case[0] == name}
        assert modes == {case[2] for case in VALID if case[0] == name}, name  # each mode has its invalid cases


@pytest.mark.parametrize(("platform", "values", "mode", "words"), INVALID,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(INVALID)])
async def test_doctor_and_serve_refuse_with_the_same_words(
    platform: str, values: dict, mode: str, words: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured = settings(tmp_path, **values)
    check = platform_checks(configured)[platform]
    assert check.mode == mode and check.problems

    doctor = [line.removeprefix("[FAIL] ") for line in await doctor_lines(configured, capsys) if line.startswith(f"[FAIL] {platform}")]
    serve = await refused_start_lines(configured, capsys)
    assert doctor == serve  # word for word, one line for the platform
    assert len(serve) == 1 and serve[0].startswith(f"{platform} is misconfigured ({mode}): ")
    for word in words:
        assert word in serve[0]


@pytest.mark.parametrize(("platform", "values", "mode"), VALID, ids=[f"{c[0]}-{c[2]}" for c in VALID])
async def test_a_valid_configuration_is_ok_in_doctor_and_builds_its_adapter(
    platform: str, values: dict, mode: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    configured = settings(tmp_path, **values)
    assert f"[ok]   {platform}: configured, {mode}" in await doctor_lines(configured, capsys)
    client = aioredis.Redis.from_url(configured.redis_url or "")  # building an adapter connects to nothing
    adapters = build_adapters(AdapterDeps(settings=configured, redis=client, ingress=None))  # type: ignore[arg-type]
    try:
        assert list(adapters) == [platform]
    finally:
        for adapter in adapters.values():
            await adapter.stop()
        await client.aclose()


async def test_every_misconfigured_platform_is_named_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    configured = settings(tmp_path, feishu_app_id="cli_a1b2c3", feishu_app_secret="s",
                          wecom_token="t", wecom_encoding_aes_key="too-short")
    doctor = [line.removeprefix("[FAIL] ") for line in await doctor_lines(configured, capsys) if " is misconfigured " in line]
    serve = await refused_start_lines(configured, capsys)
    assert doctor == serve and [line.split(" ", 1)[0] for line in serve] == ["feishu", "wecom"]


def test_an_off_platform_names_the_variables_of_each_mode(tmp_path: Path) -> None:
    checks = platform_checks(settings(tmp_path))
    assert not any(check.enabled for check in checks.values())
    assert "WECOM_TOKEN" in checks["wecom"].enable_hint and "WECOM_BOT_SECRET" in checks["wecom"].enable_hint
    assert "WECOM_MODE=ws" in checks["wecom"].enable_hint and "FEISHU_MODE=ws" in checks["feishu"].enable_hint
    assert "SLACK_APP_TOKEN" in checks["slack"].enable_hint and "TELEGRAM_WEBHOOK_URL" in checks["telegram"].enable_hint


def _run(command: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`doctor` returns by itself and runs in this process (tests/support/cli.py); `serve` is a real
    process, whose timeout ends a start that wrongly went ahead."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("FEISHU_", "SLACK_", "TELEGRAM_", "WECOM_", "ANTHROPIC_"))}
    clean.update(REDIS_URL="redis://127.0.0.1:1/0", DATA_DIR=str(tmp_path), PORT="0", ALLOW_PUBLIC="1", **env)
    if command == "doctor":
        done = run_bot_here([command], clean)
        return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())
    return subprocess.run([sys.executable, "-m", "bot", command], cwd=ROOT, env=clean, capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("env", [
    # the two configurations the issue saw doctor pass and serve refuse
    {"FEISHU_APP_ID": "cli_a1b2c3", "FEISHU_APP_SECRET": "app-secret-value"},
    {"WECOM_TOKEN": "t", "WECOM_ENCODING_AES_KEY": "wecom-aes-key-of-the-wrong-length"},
    # a value no mode accepts stops both before any check, with the same line, never the value
    {"WECOM_MODE": "websocket", "WECOM_BOT_ID": "bot1", "WECOM_BOT_SECRET": "bot-secret-value"},
], ids=["feishu-webhook-without-keys", "wecom-bad-aes-key", "wecom-unknown-mode"])
def test_the_commands_agree_end_to_end(env: dict[str, str], tmp_path: Path) -> None:
    doctor, serve = _run("doctor", tmp_path, **env), _run("serve", tmp_path, **env)
    assert doctor.returncode != 0 and serve.returncode == 2
    assert "Traceback" not in doctor.stderr + serve.stderr
    refused = [line.removeprefix("configuration error: ") for line in serve.stderr.splitlines()
               if line.startswith("configuration error: ")]
    said = [line.removeprefix("[FAIL] ").removeprefix("configuration error: ")
            for line in (doctor.stdout + doctor.stderr).splitlines()
            if line.startswith(("[FAIL] feishu", "[FAIL] wecom", "configuration error: "))]
    assert refused and said == refused
    for value in env.values():
        if len(value) > 8:
            assert value not in doctor.stdout + doctor.stderr + serve.stderr  # secrets are never echoed
