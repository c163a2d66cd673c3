"""What the `report` and `digest` commands share: the --days check and the answer log opened
from the settings (bot/report/command.py, bot/report/digest_command.py)."""
from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from bot.report.data import ReportRangeError, check_days
from bot.report.limits import LogLimits
from bot.report.log import AnswerLog

from redis.asyncio import Redis

if TYPE_CHECKING:
    from core.keys import Keys


def checked_days(command: str, days: int) -> int | None:
    """`days` when a report may cover them; else None, after saying why on stderr (exit status 2)."""
    try:
        return check_days(days)
    except ReportRangeError as exc:
        print(f"{command}: {exc}", file=sys.stderr)
        return None


@asynccontextmanager
async def answer_log_from(settings: Any) -> AsyncIterator[tuple[AnswerLog, Redis, Keys]]:
    """The answer log of settings.redis_url, with its Redis (closed on leaving) and keys."""
    from core.keys import Keys  # noqa: PLC0415
    from core.research.redact import Redactor  # noqa: PLC0415

    redis = Redis.from_url(settings.redis_url)
    keys = Keys(settings.redis_prefix)
    try:
        yield AnswerLog(redis, keys, LogLimits.from_settings(settings), Redactor.from_settings(settings)), redis, keys
    finally:
        await redis.aclose()
