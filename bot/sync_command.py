"""`python -m bot sync`: clone or update the repositories that code search reads, then refresh the
knowledge index for them. `--from DIR` adopts clones, bundles and archives copied in by hand instead
(bot/adopt.py). Both end with a summary; a failed clone also gets the next step (bot/sync_report.py).
Exit code: 0 when every repository synced, 1 when any failed (so nothing synced is never a success)."""
from __future__ import annotations

import asyncio
from pathlib import Path

from bot.settings import Settings


async def run_sync(settings: Settings, repos: list[str], from_dir: Path | None = None) -> int:
    try:
        from bot.sync import sync_repositories  # noqa: PLC0415 - part of the research feature
        from bot.sync_report import next_step_lines, summary_lines  # noqa: PLC0415
    except ImportError:
        print("sync is not available in this build")
        return 1
    if from_dir is not None:
        return await _run_adopt(settings, repos, from_dir)

    async def progress(line: str) -> None:
        print(line, flush=True)

    results = await sync_repositories(settings, repos or None, progress)
    failed = [r for r in results if not r.ok]
    synced = [r.repo for r in results if r.ok]
    if synced:
        await _reindex(settings, synced)
    print("\n" + "\n".join(summary_lines(results) + next_step_lines(failed, dict(settings.repo_urls))), flush=True)
    return 1 if failed else 0


async def _run_adopt(settings: Settings, repos: list[str], from_dir: Path) -> int:
    from bot.adopt import adopt_from  # noqa: PLC0415
    from core.research.repos import find_repo  # noqa: PLC0415

    unknown = [name for name in repos if find_repo(name) is None]
    if unknown:
        print(f"unknown repository: {', '.join(unknown)}")
        return 2
    results = await adopt_from(settings, from_dir, repos or None, lambda line: print(line, flush=True))
    adopted = [r for r in results if r.ok]
    if adopted:
        await _reindex(settings, [r.repo for r in adopted])
    print(f"\nSummary: {len(adopted)} adopted from {from_dir}, {len(results) - len(adopted)} refused.", flush=True)
    width = max((len(r.source) for r in results), default=0)
    for result in sorted(results, key=lambda r: not r.ok):  # what was adopted first, then each refusal
        if result.ok:
            note = f" ({result.note})" if result.note else ""
            print(f"  ok       {result.source:{width}}  {result.repo} at {result.commit[:12]}{note}")
        else:
            print(f"  refused  {result.source:{width}}  {result.error}")
    if not results:
        print(f"  nothing found in {from_dir}: put clones, NAME.bundle files or .tar.gz/.zip archives there "
              "(docs/index.md, docs/zh/index.md)")
    if adopted:
        print("Next: `python -m bot doctor` lists what is cloned and indexed; `python -m bot index` rebuilds the index.")
    return 0 if adopted and len(adopted) == len(results) else 1


async def _reindex(settings: Settings, repos: list[str]) -> None:
    """Refresh the knowledge index for what was just synced (only changed blobs are re-chunked)."""
    from bot.index_command import refresh_index  # noqa: PLC0415
    from core.index.builder import IndexBusy  # noqa: PLC0415

    try:
        await asyncio.to_thread(refresh_index, settings, repos, lambda line: print(f"index: {line}", flush=True))
    except (IndexBusy, OSError) as exc:  # the clones are updated; only the index is stale
        print(f"index: not refreshed ({exc}); run `python -m bot index`", flush=True)
