"""`python -m bot sync`: clone or update the local repositories that search_code and read_file read.

Clones are shallow (`--depth 1`, the default branch) or blobless (full
history, file contents fetched on demand), per REPO_SYNC_MODE. A new clone is
made in a temporary directory and renamed into place, so an interrupted sync
never leaves a half clone where the tools look. The clone URL of each
repository is a setting (REPO_URLS), so mirrors, proxies and file:// test
remotes work the same way.
"""
from __future__ import annotations

import asyncio
import inspect
import os
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bot.settings import Settings
from core.research.git import GitError, run_git
from core.research.redact import Redactor
from core.research.repos import REPOSITORIES, RepoInfo, clone_url, find_repo, local_path

Action = Literal["cloned", "updated", "failed"]
ProgressFn = Callable[[str], Any]

_USERINFO = re.compile(r"://[^/@\s]+@")
_PARALLEL = 3


@dataclass(frozen=True)
class SyncResult:
    repo: str
    action: Action
    path: str
    commit: str = ""
    error: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.action != "failed"


async def sync_repositories(settings: Settings, repos: list[str] | None, progress: ProgressFn | None = None) -> list[SyncResult]:
    """Clone missing repositories and update existing ones; one result per requested repository."""
    redact = Redactor.from_settings(settings)
    wanted: list[RepoInfo | str] = list(REPOSITORIES) if not repos else [find_repo(n) or n for n in repos]
    gate = asyncio.Semaphore(_PARALLEL)

    async def one(item: RepoInfo | str) -> SyncResult:
        if isinstance(item, str):
            await _say(progress, f"{item}: failed: not an allowlisted repository")
            return SyncResult(item, "failed", "", error="not an allowlisted repository")
        async with gate:
            await _say(progress, f"Syncing {item.name}…")
            result = await _sync_one(settings, item, redact)
            if result.ok:
                await _say(progress, f"{item.name}: {result.action} at {result.commit[:12]} ({result.seconds:.1f} s)")
            else:
                await _say(progress, f"{item.name}: failed: {result.error}")
            return result

    return list(await asyncio.gather(*(one(item) for item in wanted)))


async def _say(progress: ProgressFn | None, line: str) -> None:
    if progress is None:
        return
    outcome = progress(line)
    if inspect.isawaitable(outcome):
        await outcome


async def _sync_one(settings: Settings, repo: RepoInfo, redact: Redactor) -> SyncResult:
    started = time.monotonic()
    target = local_path(settings.repos_dir, repo)
    url = clone_url(repo, dict(settings.repo_urls))
    timeout = settings.repo_sync_timeout_seconds
    shallow = settings.repo_sync_mode == "shallow"
    try:
        if (target / ".git").exists():
            action: Action = "updated"
            await _checked(["remote", "set-url", "origin", url], target, timeout)
            fetch = ["fetch", "-q", "--depth", "1", "origin", "HEAD"] if shallow else ["fetch", "-q", "--tags", "origin", "HEAD"]
            await _checked(fetch, target, timeout)
            await _checked(["reset", "-q", "--hard", "FETCH_HEAD"], target, timeout)
        elif target.exists() and any(target.iterdir()):
            return SyncResult(repo.name, "failed", str(target), error="the directory exists and is not a git clone")
        else:
            action = "cloned"
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.parent / f".{target.name}.partial-{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            mode = ["--depth", "1", "--single-branch", "--no-tags"] if shallow else ["--filter=blob:none"]
            try:
                await _checked(["clone", "-q", *mode, "--", url, str(partial)], None, timeout)
                if target.exists():
                    target.rmdir()  # empty directory left by an earlier attempt
                partial.rename(target)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
        head = await run_git(["rev-parse", "HEAD"], target, 30)
        commit = head.stdout.decode().strip() if head.ok else ""
        return SyncResult(repo.name, action, str(target), commit, seconds=time.monotonic() - started)
    except (GitError, OSError) as exc:
        error = redact(_USERINFO.sub("://***@", str(exc)))
        return SyncResult(repo.name, "failed", str(target), error=error, seconds=time.monotonic() - started)


async def _checked(args: list[str], cwd: Path | None, timeout: float) -> None:
    result = await run_git(args, cwd, timeout)
    if not result.ok:
        message = result.stderr.decode("utf-8", errors="replace").strip().splitlines()
        raise GitError(f"git {args[0]} failed: {message[-1] if message else 'exit ' + str(result.returncode)}"[:300])
