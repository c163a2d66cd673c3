"""`python -m bot sync`: clone or update the local repositories that search_code and read_file read.

Clones are shallow (`--depth 1`, the default branch) or blobless (full
history, file contents fetched on demand), per REPO_SYNC_MODE. A shallow clone
then gets the newest SYNC_RELEASE_TAGS release tags at depth 1, so answers can
read at the user's release (core/releases/fetch.py). A new clone is
made in a temporary directory and renamed into place, so an interrupted sync
never leaves a half clone where the tools look. The clone URL of each
repository is a setting (REPO_URLS), so mirrors, proxies and file:// test
remotes work the same way.
"""
from __future__ import annotations

import asyncio
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from bot.progress import ProgressFn, say
from bot.settings import Settings
from core.releases.fetch import fetch_release_tags
from core.research.git import GitError, run_git
from core.research.redact import Redactor
from core.research.repos import REPOSITORIES, RepoInfo, clone_url, find_repo, local_path

Action = Literal["cloned", "updated", "failed"]

_USERINFO = re.compile(r"://[^/@\s]+@")
_SCP_LIKE = re.compile(r"^[^@/\s]+@([^:/\s]+):(.*)$")
_PARALLEL = 3


@dataclass(frozen=True)
class SyncResult:
    repo: str
    action: Action
    path: str
    commit: str = ""
    error: str = ""
    seconds: float = 0.0
    host: str = ""  # where the clone came from (host name or local path, never credentials): for the summary
    note: str = ""  # what else happened: release tags fetched, or why they were not

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
            await say(progress, f"{item}: failed: not an allowlisted repository")
            return SyncResult(item, "failed", "", error="not an allowlisted repository")
        async with gate:
            await say(progress, f"Syncing {item.name}…")
            result = await _sync_one(settings, item, redact)
            if result.ok:
                note = f"; {result.note}" if result.note else ""
                await say(progress, f"{item.name}: {result.action} at {result.commit[:12]} ({result.seconds:.1f} s{note})")
            else:
                await say(progress, f"{item.name}: failed: {result.error}")
            return result

    return list(await asyncio.gather(*(one(item) for item in wanted)))


async def _sync_one(settings: Settings, repo: RepoInfo, redact: Redactor) -> SyncResult:
    started = time.monotonic()
    target = local_path(settings.repos_dir, repo)
    url = clone_url(repo, dict(settings.repo_urls))
    host = url_host(url)
    timeout = settings.repo_sync_timeout_seconds
    shallow = settings.repo_sync_mode == "shallow"
    try:
        if (target / ".git").exists():
            action: Action = "updated"
            await checked_git(["remote", "set-url", "origin", url], target, timeout)
            fetch = ["fetch", "-q", "--depth", "1", "origin", "HEAD"] if shallow else ["fetch", "-q", "--tags", "origin", "HEAD"]
            await checked_git(fetch, target, timeout)
            await checked_git(["reset", "-q", "--hard", "FETCH_HEAD"], target, timeout)
        elif target.exists() and any(target.iterdir()):
            return SyncResult(repo.name, "failed", str(target), error="the directory exists and is not a git clone", host=host)
        else:
            action = "cloned"
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.parent / f".{target.name}.partial-{os.getpid()}"
            shutil.rmtree(partial, ignore_errors=True)
            mode = ["--depth", "1", "--single-branch", "--no-tags"] if shallow else ["--filter=blob:none"]
            try:
                await checked_git(["clone", "-q", *mode, "--", url, str(partial)], None, timeout)
                if target.exists():
                    target.rmdir()  # empty directory left by an earlier attempt
                partial.rename(target)
            finally:
                shutil.rmtree(partial, ignore_errors=True)
        note = await _release_tags(settings, target, redact) if shallow else ""
        head = await run_git(["rev-parse", "HEAD"], target, 30)
        commit = head.stdout.decode().strip() if head.ok else ""
        return SyncResult(repo.name, action, str(target), commit, seconds=time.monotonic() - started, host=host, note=note)
    except (GitError, OSError) as exc:
        error = redact(_USERINFO.sub("://***@", str(exc)))
        return SyncResult(repo.name, "failed", str(target), error=error, seconds=time.monotonic() - started, host=host)


async def _release_tags(settings: Settings, target: Path, redact: Redactor) -> str:
    """A shallow clone has no tags: fetch the newest release tags (core/releases/fetch.py). A failure
    costs reading at releases only, never the synced clone."""
    try:
        fetched = await fetch_release_tags(target, settings.sync_release_tags, settings.repo_sync_timeout_seconds,
                                           checked_git, _git_output)
    except (GitError, OSError) as exc:
        return "release tags not fetched: " + redact(_USERINFO.sub("://***@", str(exc)))[:200]
    return f"{len(fetched)} release tag(s) fetched" if fetched else ""


async def _git_output(args: list[str], cwd: Path, timeout: float) -> bytes:
    result = await run_git(args, cwd, timeout)
    if not result.ok:
        raise GitError(f"git {args[0]} failed: {git_error_line(result.stderr) or 'exit ' + str(result.returncode)}"[:300])
    return result.stdout


def split_clone_url(url: str) -> tuple[str, str]:
    """(host, path) of a clone URL: https://, ssh://, scp-like git@host:path; the host is '' for a local
    path or file://. Never the user or password written into it."""
    text = url.strip()
    if "://" not in text:
        scp = _SCP_LIKE.match(text)
        return (scp.group(1), scp.group(2)) if scp else ("", text)
    parts = urlsplit(text)
    return ("" if parts.scheme == "file" else parts.hostname or ""), parts.path


def url_host(url: str) -> str:
    """Where a clone comes from, for a person: the host name, or the path of a local repository."""
    host, path = split_clone_url(url)
    return host or path


async def checked_git(args: list[str], cwd: Path | None, timeout: float) -> None:
    """Run git; on failure raise GitError naming the subcommand and git's own error line."""
    result = await run_git(args, cwd, timeout)
    if not result.ok:
        verb = next((a for a in args if not a.startswith("-")), args[0])
        raise GitError(f"git {verb} failed: {git_error_line(result.stderr) or 'exit ' + str(result.returncode)}"[:300])


def git_error_line(stderr: bytes) -> str:
    """The line of git's stderr that says what went wrong: the first `fatal:`/`error:` line (the last
    line is often advice such as "and the repository exists."), else the last line."""
    lines = [line.strip() for line in stderr.decode("utf-8", errors="replace").splitlines() if line.strip()]
    for line in lines:
        if line.startswith(("fatal:", "error:")):
            return line
    return lines[-1] if lines else ""
