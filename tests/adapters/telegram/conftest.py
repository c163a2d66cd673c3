"""Fixtures shared by the Telegram adapter tests: the fake Bot API and an adapter built on it."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.base import AdapterDeps
from adapters.telegram import create_adapter
from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.inbound import message_to_inbound
from core.ingress import Ingress
from core.messages import InboundMessage
from tests.support.fake_telegram import TOKEN, FakeTelegram

GROUP = -100200300


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


@pytest.fixture
async def adapter(tg: FakeTelegram, make_settings: Any, redis: Any, keys: Any) -> AsyncIterator[TelegramAdapter]:
    settings = make_settings(telegram_bot_token=TOKEN, telegram_api_url=tg.api_url)
    built = create_adapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 60)))
    assert built is not None
    yield built
    await built.stop()


async def inbound(adapter: TelegramAdapter, data: dict[str, Any]) -> InboundMessage:
    message = message_to_inbound(data, await adapter.identity())
    assert message is not None
    return message
