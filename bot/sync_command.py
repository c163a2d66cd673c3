"""`python -m bot sync`: clone or update the repositories that code search reads."""
from __future__ import annotations

from bot.settings import Settings


async def run_sync(settings: Settings, repos: list[str]) -> int:
    try:
        from bot.sync import sync_repositories  # noqa: PLC0415 - part of the research feature
    except ImportError:
        print("sync is not available in this build")
        return 1

    async def progress(line: str) -> None:
        print(line, flush=True)

    results = await sync_repositories(settings, repos or None, progress)
    failed = [r for r in results if not getattr(r, "ok", False)]
    return 1 if failed else 0
