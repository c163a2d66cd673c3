"""Telegram messages are paced per chat through Redis, so several processes share Telegram's limits."""
from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.common.pacing import Pacer
from adapters.telegram.client import GROUP_RATE, PRIVATE_RATE, TelegramSender, build_bot
from tests.support.fake_telegram import TOKEN, FakeTelegram

GROUP = -100_777


@pytest.fixture
async def tg() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as fake:
        yield fake


async def test_two_processes_posting_to_one_group_share_its_per_minute_budget(tg: FakeTelegram, redis: Any, keys: Any) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    # two workers, each with its own bot (as in two processes: so each has its own in-process flood
    # limiter, which one shared bot would make sleep for real past 20 messages), sender and pacer
    bots = [build_bot(TOKEN, tg.api_url) for _ in range(2)]
    for bot in bots:
        await bot.initialize()
    try:
        senders = [TelegramSender(bot, redis, keys, GROUP, None, pacer=Pacer(redis, keys, "telegram", sleep)) for bot in bots]
        for n in range(GROUP_RATE.burst + 2):
            await senders[n % 2].send(f"message {n}")
    finally:
        for bot in bots:
            await bot.shutdown()
    assert len(tg.calls_to("sendMessage")) == GROUP_RATE.burst + 2
    assert len(waits) == 2  # the burst was shared: only the two beyond it waited
    assert GROUP_RATE.interval / 2 < waits[0] <= GROUP_RATE.interval


async def test_a_private_chat_is_paced_on_its_own(tg: FakeTelegram, redis: Any, keys: Any) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    bot = build_bot(TOKEN, tg.api_url)
    await bot.initialize()
    try:
        pacer = Pacer(redis, keys, "telegram", sleep)
        for chat in (42, 43):
            sender = TelegramSender(bot, redis, keys, chat, None, pacer=pacer)
            for n in range(PRIVATE_RATE.burst):
                await sender.send(f"message {n}")
    finally:
        await bot.shutdown()
    assert waits == []  # within each chat's burst, and chats do not share slots
