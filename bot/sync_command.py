"""`python -m bot sync`: clone or update the repositories that code search reads, then refresh the
knowledge index for them."""
from __future__ import annotations

import asyncio

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
    synced = [r.repo for r in results if getattr(r, "ok", False)]
    if synced:
        await _reindex(settings, synced)
    return 1 if failed else 0


async def _reindex(settings: Settings, repos: list[str]) -> None:
    """Refresh the knowledge index for what was just synced (only changed blobs are re-chunked)."""
    from bot.index_command import refresh_index  # noqa: PLC0415
    from core.index.builder import IndexBusy  # noqa: PLC0415

    try:
        await asyncio.to_thread(refresh_index, settings, repos, lambda line: print(f"index: {line}", flush=True))
    except (IndexBusy, OSError) as exc:  # the clones are updated; only the index is stale
        print(f"index: not refreshed ({exc}); run `python -m bot index`", flush=True)
