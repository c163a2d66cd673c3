"""Download the issues of the allowlisted repositories, page by page, resumably.

For each repository: read the cursor (state.py), walk the listing newest-updated first from the
saved page, and for every page: fetch the maintainers' comments of closed issues, append the
page's issues to the JSONL file (fsynced), then save the cursor. A failure (exhausted retries,
a rate-limit wait longer than allowed) stops that repository with everything before it kept;
the next run resumes at the first page not stored. When the walk reaches the end, `since`
becomes the newest updated_at seen and the next run only asks for what changed.

GitHub repositories run one after another (one token budget), GitCode ones likewise; the two
hosts run side by side.
"""
from __future__ import annotations

import asyncio
import fcntl
import importlib
import importlib.util
import inspect
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

from bot.issues.hosts import BadItem, GitCodeIssues, GitHubIssues, IssueHost, Limits, item_number, to_stored, wants_comments
from bot.issues.http import ApiError, Clock, HostClient, Policy, SystemClock
from bot.issues.state import Pending, RepoState, StateError, SyncState
from bot.settings import Settings, secret
from core.issue_store import (
    IssueComment,
    StoredIssue,
    append_issues,
    compact_issue_file,
    issues_dir,
    issues_path,
    parse_time,
    stored_versions,
    utc_iso,
)
from core.research.redact import Redactor
from core.research.repos import REPOSITORIES, RepoInfo, find_repo

ProgressFn = Callable[[str], Any]
log = logging.getLogger(__name__)
_COMPACT_RATIO = 1.5  # rewrite a file once it holds 50 % more lines than issues


@dataclass(frozen=True)
class RepoOutcome:
    repo: str
    new: int = 0
    updated: int = 0
    pages: int = 0
    seconds: float = 0.0
    skipped: int = 0  # API objects that were not usable issues
    complete: bool = True  # False: stopped by --max-pages, the next run continues
    error: str = ""
    resumable: bool = True  # a rerun can pick up where this one failed

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def changed(self) -> bool:
        return self.new + self.updated > 0

    def line(self) -> str:
        if self.error:
            if not self.resumable:
                return f"{self.repo}: failed: {self.error}"
            kept = f"{self.pages} page(s) stored this run; " if self.pages else ""
            return f"{self.repo}: failed: {self.error} ({kept}a rerun resumes)"
        text = f"{self.repo}: {self.new} new, {self.updated} updated issues, {self.pages} page(s), {self.seconds:.1f} s"
        if self.skipped:
            text += f", {self.skipped} unusable item(s) skipped"
        if not self.complete:
            text += "; stopped by --max-pages, a rerun continues"
        return text


async def sync_issues(
    settings: Settings,
    names: Sequence[str] = (),
    *,
    max_pages: int | None = None,
    clock: Clock | None = None,
    progress: ProgressFn | None = None,
) -> list[RepoOutcome]:
    """One outcome per requested repository (all allowlisted ones when `names` is empty)."""
    clock = clock or SystemClock()
    wanted: list[RepoInfo] = []
    outcomes: list[RepoOutcome] = []
    for name in names or [r.name for r in REPOSITORIES]:
        info = find_repo(name)
        if info is None:
            outcomes.append(RepoOutcome(name, error="not an allowlisted repository", resumable=False))
            await _say(progress, outcomes[-1].line())
        elif info not in wanted:
            wanted.append(info)
    if not wanted:
        return outcomes
    initial_since = settings.issues_initial_since
    if initial_since:
        try:
            initial_since = utc_iso(initial_since if "T" in initial_since else initial_since + "T00:00:00Z")
        except ValueError:
            failed = [RepoOutcome(r.name, error=f"ISSUES_INITIAL_SINCE is not a date: {initial_since!r}", resumable=False) for r in wanted]
            for outcome in failed:
                await _say(progress, outcome.line())
            return outcomes + failed
    try:
        with _exclusive(settings.data_dir):
            state = SyncState.load(settings.data_dir)
            async with httpx.AsyncClient(timeout=settings.issues_http_timeout_seconds) as http:
                hosts = _hosts(settings, http, clock)
                limits = _limits(settings)
                groups = [[r for r in wanted if r.issue_host == h] for h in ("github", "gitcode")]
                results = await asyncio.gather(
                    *(_run_group(hosts[g[0].issue_host], g, state, settings.data_dir, limits, max_pages, clock, progress, initial_since) for g in groups if g)
                )
    except (StateError, _Busy) as exc:
        failed = [RepoOutcome(r.name, error=str(exc)) for r in wanted]
        for outcome in failed:
            await _say(progress, outcome.line())
        return outcomes + failed
    by_name = {o.repo: o for group in results for o in group}
    return outcomes + [by_name[r.name] for r in wanted]


async def _run_group(
    host: IssueHost,
    repos: list[RepoInfo],
    state: SyncState,
    data_dir: Path,
    limits: Limits,
    max_pages: int | None,
    clock: Clock,
    progress: ProgressFn | None,
    initial_since: str | None,
) -> list[RepoOutcome]:
    outcomes = []
    for repo in repos:
        outcome = await sync_repo(host, repo, state, data_dir, limits, max_pages, clock, initial_since)
        outcomes.append(outcome)
        await _say(progress, outcome.line())
    return outcomes


async def sync_repo(
    host: IssueHost,
    repo: RepoInfo,
    state: SyncState,
    data_dir: Path,
    limits: Limits,
    max_pages: int | None,
    clock: Clock,
    initial_since: str | None = None,
) -> RepoOutcome:
    started = clock.monotonic()
    known: dict[int, str] = {}
    entry = state.get(repo.name)
    cursor = entry.pending or Pending(since=entry.since or initial_since, next_page=1, newest=None)
    new = updated = pages = skipped = 0

    def outcome(**extra: Any) -> RepoOutcome:
        return RepoOutcome(repo.name, new, updated, pages, clock.monotonic() - started, skipped, **extra)

    may_restart = cursor.next_path is not None  # a cursor saved by an earlier run may have expired
    try:
        known = stored_versions(issues_path(data_dir, repo.name))
        while True:
            if max_pages is not None and pages >= max_pages:
                return outcome(complete=False)
            try:
                listed = await host.list_page(repo, cursor.since, cursor.next_page, cursor.next_path)
            except ApiError as exc:
                if not (may_restart and exc.status in (400, 404, 410, 422)):
                    raise
                # Walk again from the first page with the same `since`: what is stored is skipped
                # as unchanged, so this costs requests, not duplicates.
                cursor = Pending(cursor.since, 1, cursor.newest, cursor.pages)
                may_restart = False
                continue
            may_restart = False
            batch: list[StoredIssue] = []
            newest = cursor.newest
            for item in listed.items:
                try:
                    number = item_number(item)
                    updated_at = utc_iso(str(item["updated_at"]))
                except (BadItem, KeyError, ValueError):
                    skipped += 1
                    continue
                newest = updated_at if newest is None or parse_time(updated_at) > parse_time(newest) else newest
                if known.get(number) == updated_at:
                    continue  # unchanged: the inclusive `since` boundary, or a page repeated on resume
                try:
                    batch.append(to_stored(repo, item, await _comments(host, repo, item), limits))
                except BadItem:
                    skipped += 1
            append_issues(data_dir, repo.name, batch)  # fsynced before the cursor moves past it
            for issue in batch:
                if issue.number in known:
                    updated += 1
                else:
                    new += 1
                known[issue.number] = issue.updated_at
            pages += 1
            cursor = Pending(cursor.since, cursor.next_page + 1, newest, cursor.pages + 1, listed.next_path)
            if not listed.has_next:
                done_at = datetime.fromtimestamp(clock.time(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
                state.put(repo.name, RepoState(since=newest or cursor.since, synced_at=done_at, pending=None))
                break
            state.set_pending(repo.name, cursor)
    except ApiError as exc:
        return outcome(error=str(exc))
    except BadItem as exc:  # the listing itself was not a list of issues (a proxy page, an API change)
        return outcome(error=f"{host.client.name} answered the issue listing with something else ({exc})")
    except OSError as exc:
        return outcome(error=f"could not read or write under {issues_dir(data_dir)} ({type(exc).__name__}: {exc.strerror or exc})")
    try:
        _compact_if_bloated(data_dir, repo.name, len(known))
    except OSError as exc:  # the appended file is complete and readable; compaction can wait
        log.warning("issues of %s: compaction skipped (%s)", repo.name, type(exc).__name__)
    return outcome()


async def _comments(host: IssueHost, repo: RepoInfo, item: dict[str, Any]) -> tuple[IssueComment, ...]:
    if not wants_comments(item):
        return ()
    try:
        return await host.comments(repo, item)
    except ApiError as exc:
        if exc.status is not None:  # e.g. 404 for a deleted thread: keep the issue without comments
            return ()
        raise


def _compact_if_bloated(data_dir: Path, repo: str, issues: int) -> None:
    path = issues_path(data_dir, repo)
    if not path.exists():
        return
    with path.open("rb") as handle:
        lines = sum(1 for line in handle if line.strip())
    if lines > max(10, issues * _COMPACT_RATIO):
        compact_issue_file(data_dir, repo)


def _hosts(settings: Settings, http: httpx.AsyncClient, clock: Clock) -> dict[str, IssueHost]:
    redact = Redactor.from_settings(settings)
    base = Policy(retries=settings.issues_retries, max_wait=settings.issues_max_wait_seconds)
    github = HostClient(http, "github", settings.github_api_url, secret(settings.github_token), base, clock, redact)
    gitcode_policy = Policy(
        retries=settings.issues_retries, max_wait=settings.issues_max_wait_seconds, min_interval=settings.issues_gitcode_min_interval_seconds
    )
    gitcode = HostClient(http, "gitcode", settings.gitcode_api_url, secret(settings.gitcode_token), gitcode_policy, clock, redact)
    limits = _limits(settings)
    return {"github": GitHubIssues(github, limits), "gitcode": GitCodeIssues(gitcode, limits)}


def _limits(settings: Settings) -> Limits:
    return Limits(settings.issues_page_size, settings.issues_body_max_chars, settings.issues_comment_max_chars, settings.issues_max_comments)


class _Busy(Exception):
    pass


@contextmanager
def _exclusive(data_dir: Path) -> Iterator[None]:
    """One issue sync per DATA_DIR at a time: two would interleave appends and cursors."""
    folder = issues_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise _Busy(f"another issue sync is running on {folder}") from None
        yield
    finally:
        os.close(fd)


async def _say(progress: ProgressFn | None, line: str) -> None:
    if progress is None:
        return
    result = progress(line)
    if inspect.isawaitable(result):
        await result


async def reindex_changed(settings: Settings, repos: list[str], say: Callable[[str], None] = print) -> bool:
    """Re-index the repositories whose issues changed, when this build has the index
    (bot/index_command.py with `refresh_index`). False when the re-index failed."""
    if not repos or importlib.util.find_spec("bot.index_command") is None:
        return True
    module = importlib.import_module("bot.index_command")
    refresh = getattr(module, "refresh_index", None)
    if refresh is None:
        return True
    try:
        # CPU-bound and synchronous: off the event loop
        await asyncio.to_thread(refresh, settings, list(repos), say)
    except Exception as exc:  # noqa: BLE001 - the issues are stored; only the index is stale
        say(f"index: not refreshed ({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); run `python -m bot index`")
        return False
    return True


async def run_issues_sync(settings: Settings, repos: Sequence[str], max_pages: int | None = None, clock: Clock | None = None) -> int:
    """The `sync --issues` command: one line per repository, exit 1 when any failed."""

    def say(line: str) -> None:
        print(line, flush=True)

    outcomes = await sync_issues(settings, repos, max_pages=max_pages, clock=clock, progress=say)
    indexed = await reindex_changed(settings, [o.repo for o in outcomes if o.ok and o.changed], say)
    return 0 if indexed and all(o.ok for o in outcomes) else 1
