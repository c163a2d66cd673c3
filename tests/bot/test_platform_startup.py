"""A platform whose credentials are set either starts or stops startup with one clear line;
it is never skipped silently (its users would get no answer and no error)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.base import AdapterDeps
from bot.settings import Settings
from bot.wiring import PlatformStartupError, build_adapters

ROOT = Path(__file__).resolve().parents[2]
TELEGRAM_TOKEN = "123456:" + "A" * 35


def deps(**values: object) -> AdapterDeps:
    settings = Settings(_env_file=None, **values)  # type: ignore[arg-type]
    return AdapterDeps(settings=settings, redis=None, ingress=None)  # type: ignore[arg-type]


def test_no_credentials_means_no_platform_and_no_error() -> None:
    assert build_adapters(deps()) == {}


@pytest.mark.parametrize(
    ("values", "platform", "hint"),
    [
        ({"feishu_app_id": "cli_x", "feishu_app_secret": "s"}, "feishu", "FEISHU_ENCRYPT_KEY"),
        ({"feishu_app_id": "cli_x"}, "feishu", "FEISHU_APP_SECRET"),
        ({"wecom_token": "t"}, "wecom", "WECOM_ENCODING_AES_KEY"),
        ({"wecom_mode": "ws", "wecom_bot_id": "b"}, "wecom", "WECOM_BOT_SECRET"),
        ({"slack_signing_secret": "s"}, "slack", "SLACK_BOT_TOKEN"),
        ({"telegram_bot_token": "not-a-token"}, "telegram", "malformed"),
    ],
)
def test_half_configured_platform_stops_startup(values: dict, platform: str, hint: str) -> None:
    with pytest.raises(PlatformStartupError) as raised:
        build_adapters(deps(**values))
    message = str(raised.value)
    assert message.startswith(platform) and hint in message
    assert "\n" not in message


def test_configured_platform_that_cannot_import_stops_startup(monkeypatch: pytest.MonkeyPatch) -> None:
    # As if python-telegram-bot were missing from this install.
    monkeypatch.delitem(sys.modules, "adapters.telegram", raising=False)
    monkeypatch.setitem(sys.modules, "adapters.telegram.adapter", None)
    with pytest.raises(PlatformStartupError, match="^telegram credentials are set but its adapter cannot be imported"):
        build_adapters(deps(telegram_bot_token=TELEGRAM_TOKEN))


def test_serve_exits_with_one_line_instead_of_running_without_the_platform(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FEISHU_", "SLACK_", "TELEGRAM_", "WECOM_"))}
    env.update(
        FEISHU_APP_ID="cli_x", FEISHU_APP_SECRET="s", REDIS_URL="redis://127.0.0.1:1/0",
        DATA_DIR=str(tmp_path), PORT="0", ALLOWED_WORKSPACES='["feishu:tenant1"]',
    )
    done = subprocess.run(
        [sys.executable, "-m", "bot", "serve"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert errors == ["configuration error: feishu is misconfigured (webhook): FEISHU_ENCRYPT_KEY is not set; "
                      "FEISHU_VERIFICATION_TOKEN is not set; FEISHU_MODE=ws (long connection) needs no callback keys"]
