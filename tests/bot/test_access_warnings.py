"""Start-up names every enabled platform that anyone who finds the bot may use."""
from __future__ import annotations

import logging

import pytest

from bot.wiring import build_components, warn_about_access
from core.access import AccessPolicy
from tests.support.fake_telegram import TOKEN as TELEGRAM_TOKEN

WECOM = {"wecom_token": "wecom-warn-token", "wecom_encoding_aes_key": "kWxPEV2QE6N1q9oGNVb5XQCMO1XIQV0MPPkO5q5Fj5o"}


class Idle:
    async def handle(self, message: object, progress: object) -> None:  # never called: nothing is started
        raise AssertionError


async def _warnings(make_settings, redis, caplog: pytest.LogCaptureFixture, **overrides: object) -> list[str]:
    settings = make_settings(telegram_bot_token=TELEGRAM_TOKEN, **WECOM, **overrides)
    with caplog.at_level(logging.WARNING, logger="bot.wiring"):
        components = build_components(settings, redis=redis, conversation=Idle())
    assert set(components.adapters) == {"telegram", "wecom"}
    for adapter in components.adapters.values():
        await adapter.stop()
    return [r.getMessage() for r in caplog.records if r.name == "bot.wiring" and r.levelno == logging.WARNING]


async def test_one_warning_per_open_platform(make_settings, redis, caplog) -> None:
    lines = await _warnings(make_settings, redis, caplog)
    assert len(lines) == 2
    assert lines[0].startswith("telegram is open to everyone") and "telegram:<user id>" in lines[0]
    assert lines[1].startswith("wecom is open to everyone") and "wecom:<user id>" in lines[1]


async def test_a_qualified_entry_closes_only_its_platform(make_settings, redis, caplog) -> None:
    lines = await _warnings(make_settings, redis, caplog, allowed_users=["telegram:42"])
    assert len(lines) == 1 and lines[0].startswith("wecom is open to everyone")


async def test_an_unqualified_entry_closes_every_platform(make_settings, redis, caplog) -> None:
    assert await _warnings(make_settings, redis, caplog, allowed_channels=["-100200300"]) == []


def test_a_misspelt_platform_is_named() -> None:
    # The misspelt entry is a literal id that applies everywhere: Telegram is closed (to nearly everyone),
    # so the warning that matters is the one saying the entry did not do what was meant.
    lines = warn_about_access(AccessPolicy.of([], [], ["telgram:42"]), ["telegram"])
    assert len(lines) == 1 and "'telgram'" in lines[0] and "names no platform" in lines[0]
