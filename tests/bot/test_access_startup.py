"""Closed by default: a process that takes platform traffic does not start while an enabled platform is
open to everyone, unless ALLOW_PUBLIC (or ALLOW_PUBLIC_PLATFORMS) opens it on purpose; the terminal is
never blocked; `doctor` names each platform as closed (by which entries) or open (and what closes it)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from adapters.registry import platform_names
from bot.access_check import OpenPlatformError, access_policy, check_access
from bot.doctor import run_doctor
from bot.settings import Settings
from bot.wiring import build_components
from tests.support.cli import run_bot_here
from tests.support.fake_telegram import TOKEN as TELEGRAM_TOKEN

NAMES = platform_names()  # the registered platforms' names, as the bot passes them to core/access.py

ROOT = Path(__file__).resolve().parents[2]
WECOM = {"wecom_token": "wecom-warn-token", "wecom_encoding_aes_key": "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"}
_PLATFORM_ENV = ("ANTHROPIC_", "OPENAI_", "SLACK_", "TELEGRAM_", "FEISHU_", "WECOM_", "ALLOWED_", "ALLOW_PUBLIC")


class Idle:
    async def handle(self, message: object, progress: object) -> None:  # never called: nothing is started
        raise AssertionError


async def _start(make_settings, redis, caplog: pytest.LogCaptureFixture, **overrides: object) -> list[str]:
    """Build the components as `serve` does (adapters included); the warnings logged on the way."""
    settings = make_settings(telegram_bot_token=TELEGRAM_TOKEN, **WECOM, **overrides)
    with caplog.at_level(logging.WARNING, logger="bot.access_check"):
        components = build_components(settings, redis=redis, conversation=Idle())
    assert set(components.adapters) == {"telegram", "wecom"}
    for adapter in components.adapters.values():
        await adapter.stop()
    return [r.getMessage() for r in caplog.records if r.name == "bot.access_check" and r.levelno == logging.WARNING]


async def test_an_open_telegram_does_not_start(make_settings, redis) -> None:
    settings = make_settings(telegram_bot_token=TELEGRAM_TOKEN)
    with pytest.raises(OpenPlatformError) as refused:
        build_components(settings, redis=redis, conversation=Idle())
    line = str(refused.value)
    assert "\n" not in line and line.startswith("telegram is open to everyone")
    assert 'ALLOWED_USERS=["telegram:<user id>"]' in line and "ALLOW_PUBLIC=1" in line


async def test_qualifying_one_platform_leaves_the_other_refused(make_settings, redis) -> None:
    settings = make_settings(telegram_bot_token=TELEGRAM_TOKEN, **WECOM, allowed_users=["telegram:42"])
    with pytest.raises(OpenPlatformError) as refused:
        build_components(settings, redis=redis, conversation=Idle())
    assert str(refused.value).startswith("wecom is open to everyone") and "telegram is open" not in str(refused.value)


async def test_allow_public_starts_and_still_warns_per_open_platform(make_settings, redis, caplog) -> None:
    lines = await _start(make_settings, redis, caplog, allow_public=True)
    assert [line.split(" ", 1)[0] for line in lines] == ["telegram", "wecom"]
    assert all("opened on purpose by ALLOW_PUBLIC" in line for line in lines)


async def test_allow_public_platforms_opens_only_those_named(make_settings, redis, caplog) -> None:
    with pytest.raises(OpenPlatformError, match="^wecom is open"):
        build_components(make_settings(telegram_bot_token=TELEGRAM_TOKEN, **WECOM, allow_public_platforms="telegram"),
                         redis=redis, conversation=Idle())
    lines = await _start(make_settings, redis, caplog, allow_public_platforms="Telegram, wecom")
    assert len(lines) == 2


async def test_an_entry_for_each_platform_starts_without_a_warning(make_settings, redis, caplog) -> None:
    assert await _start(make_settings, redis, caplog, allowed_users=["telegram:42"], allowed_channels=["wecom:grp1"]) == []
    assert await _start(make_settings, redis, caplog, allowed_channels=["-100200300"]) == []  # unqualified: everywhere


def test_the_exact_variable_names_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith(_PLATFORM_ENV)]:
        monkeypatch.delenv(name)
    assert access_policy(Settings(_env_file=None)).refused_platforms(["telegram"]) == ["telegram"]  # type: ignore[call-arg]
    monkeypatch.setenv("ALLOW_PUBLIC", "1")
    assert access_policy(Settings(_env_file=None)).refused_platforms(["telegram", "slack"]) == []  # type: ignore[call-arg]
    monkeypatch.delenv("ALLOW_PUBLIC")
    monkeypatch.setenv("ALLOW_PUBLIC_PLATFORMS", "telegram,slack")
    policy = access_policy(Settings(_env_file=None))  # type: ignore[call-arg]
    assert policy.refused_platforms(["telegram", "slack", "feishu"]) == ["feishu"]
    monkeypatch.setenv("ALLOW_PUBLIC_PLATFORMS", "telgram")
    with pytest.raises(ValueError, match="names no chat platform: 'telgram'"):
        access_policy(Settings(_env_file=None))  # type: ignore[call-arg]


def test_a_misspelt_platform_is_named() -> None:
    # The misspelt entry is a literal id that applies everywhere: Telegram is closed (to nearly everyone),
    # so the warning that matters is the one saying the entry did not do what was meant.
    lines = check_access(NAMES.policy([], [], ["telgram:42"]), ["telegram"])
    assert len(lines) == 1 and "'telgram'" in lines[0] and "names no platform" in lines[0]


def _env(tmp_path: Path, **env: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(_PLATFORM_ENV) and k != "REDIS_URL"}
    clean.update(DATA_DIR=str(tmp_path / "data"), REPOS_DIR=str(tmp_path / "repos"), **env)
    return clean


def _bot(*args: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """A real process: a start that wrongly went ahead would serve forever, and the timeout ends it."""
    return subprocess.run([sys.executable, "-m", "bot", *args], cwd=tmp_path, env=_env(tmp_path, **env),
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("mode", ["serve", "web", "worker"])
def test_every_process_that_takes_platform_traffic_refuses_an_open_telegram(tmp_path: Path, mode: str) -> None:
    done = _bot(mode, "--port", "0", tmp_path=tmp_path, TELEGRAM_BOT_TOKEN=TELEGRAM_TOKEN,
                REDIS_URL="redis://127.0.0.1:1/0")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and TELEGRAM_TOKEN not in done.stderr + done.stdout
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert line.startswith("configuration error: telegram is open to everyone") and "ALLOW_PUBLIC=1" in line


def test_the_terminal_is_never_blocked(tmp_path: Path) -> None:
    # `ask` returns by itself, so it runs in this process (tests/support/cli.py)
    done = run_bot_here(["ask", "--offline", "--json", "vllm-ascend 0.9.1 fails at startup"],
                        _env(tmp_path, TELEGRAM_BOT_TOKEN=TELEGRAM_TOKEN), cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    assert b'"kind"' in done.stdout


async def _doctor(make_settings, capsys: pytest.CaptureFixture[str], **values: object) -> tuple[int, list[str]]:
    code = await run_doctor(make_settings(telegram_bot_token=TELEGRAM_TOKEN, **values))
    return code, [line for line in capsys.readouterr().out.splitlines() if " access: " in line]


async def test_doctor_warns_about_an_open_platform_and_names_what_closes_it(make_settings, capsys) -> None:
    code, lines = await _doctor(make_settings, capsys, allow_public=True)
    assert code == 0
    [line] = lines
    assert line.startswith("[warn] access: telegram: OPEN") and 'ALLOWED_USERS=["telegram:<user id>"]' in line
    assert 'ALLOWED_CHANNELS=["telegram:<chat id>"]' in line and "ALLOW_PUBLIC" in line


async def test_doctor_fails_an_open_platform_that_would_not_start(make_settings, capsys) -> None:
    code, [line] = await _doctor(make_settings, capsys)
    assert code == 1
    assert line.startswith("[FAIL] access: telegram: open to everyone") and "ALLOW_PUBLIC=1" in line
    assert 'ALLOWED_USERS=["telegram:<user id>"]' in line


async def test_doctor_names_the_entries_that_close_a_platform(make_settings, capsys) -> None:
    code, lines = await _doctor(make_settings, capsys, allowed_users=["telegram:42", "slack:U1"], allowed_channels=["C9"])
    assert code == 0
    assert lines == ["[ok]   access: telegram: closed by ALLOWED_CHANNELS C9; ALLOWED_USERS telegram:42"]
