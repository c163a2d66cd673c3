"""Download the issues of the allowlisted repositories, page by page, resumably.

For each repository: read the cursor (state.py), walk the listing newest-updated first from the
saved page, and for every page: fetch the maintainers' comments of closed issues, append the
page's issues to the JSONL file (fsynced), then save the cursor. A failure (exhausted retries,
a rate-limit wait longer than allowed) stops that repository with everything before it kept;
the next run resumes at the first page not stored. When the walk reaches the end, `since`
becomes the newest updated_at seen and the next run only asks for what changed.

Every ISSUES_FULL_LISTING_DAYS (or with --full) the walk is a full listing instead (no `since`):
when it completes, the stored threads it did not list (deleted as spam, transferred) are removed
from the store, and so from the index on the re-index that follows. A walk that stops early
removes nothing.

GitHub repositories run one after another (one token budget), GitCode ones likewise; the two
hosts run side by side.
"""
from __future__ import annotations

import asyncio
import fcntl
import importlib
import importlib.util
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx

from bot.issues.followup import run_followups
from bot.issues.hosts import BadItem, GitCodeIssues, GitHubIssues, IssueHost, Limits, item_number, to_stored, wants_comments
from bot.issues.http import ApiError, Clock, HostClient, Policy, SystemClock
from bot.issues.state import ListedNumbers, Pending, RepoState, StateError, SyncState
from bot.progress import ProgressFn, say
from bot.settings import Settings, secret
from core.issue_store import (
    IssueComment,
    StoredIssue,
    append_issues,
    compact_issue_file,
    issues_dir,
    issues_path,
    parse_time,
    read_issue_file,
    remove_issues,
    stored_versions,
    utc_iso,
)
from core.research.redact import Redactor
from core.research.repos import REPOSITORIES, RepoInfo, find_repo

log = logging.getLogger(__name__)
_COMPACT_RATIO = 1.5  # rewrite a file once it holds 50 % more lines than issues
# A full listing that lacks more than half of the stored threads (and more than a handful) is a
# host fault (an empty page from a proxy, a wrong total_page), not a wave of deletions: keep them.
_REMOVAL_SHARE = 0.5
_REMOVAL_FLOOR = 5


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
    removed: int = 0  # threads a full listing no longer showed, dropped from the store
    note: str = ""  # e.g. why a full listing removed nothing

    @property
    def ok(self) -> bool:
        return not self.error

    @property
    def changed(self) -> bool:
        """Worth a re-index: a removed thread must leave the index too."""
        return self.new + self.updated + self.removed > 0

    def line(self) -> str:
        if self.error:
            if not self.resumable:
                return f"{self.repo}: failed: {self.error}"
            kept = f"{self.pages} page(s) stored this run; " if self.pages else ""
            return f"{self.repo}: failed: {self.error} ({kept}a rerun resumes)"
        text = f"{self.repo}: {self.new} new, {self.updated} updated threads, {self.pages} page(s), {self.seconds:.1f} s"
        if self.skipped:
            text += f", {self.skipped} unusable item(s) skipped"
        if self.removed:
            text += f", {self.removed} removed (no longer listed)"
        if self.note:
            text += f"; {self.note}"
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
    full: bool = False,
) -> list[RepoOutcome]:
    """One outcome per requested repository (all allowlisted ones when `names` is empty).
    `full`: a full listing now, whenever the last one was."""
    clock = clock or SystemClock()
    wanted: list[RepoInfo] = []
    outcomes: list[RepoOutcome] = []
    for name in names or [r.name for r in REPOSITORIES]:
        info = find_repo(name)
        if info is None:
            outcomes.append(RepoOutcome(name, error="not an allowlisted repository", resumable=False))
            await say(progress, outcomes[-1].line())
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
                await say(progress, outcome.line())
            return outcomes + failed
    try:
        with exclusive(settings.data_dir):
            state = SyncState.load(settings.data_dir)
            async with httpx.AsyncClient(timeout=settings.issues_http_timeout_seconds) as http:
                hosts = _hosts(settings, http, clock)
                plan = _Plan(_limits(settings), max_pages, initial_since, settings.issues_full_listing_days, full)
                groups = [[r for r in wanted if r.issue_host == h] for h in ("github", "gitcode")]
                results = await asyncio.gather(
                    *(_run_group(hosts[g[0].issue_host], g, state, settings.data_dir, plan, clock, progress) for g in groups if g)
                )
    except (StateError, IssuesBusy) as exc:
        failed = [RepoOutcome(r.name, error=str(exc)) for r in wanted]
        for outcome in failed:
            await say(progress, outcome.line())
        return outcomes + failed
    by_name = {o.repo: o for group in results for o in group}
    return outcomes + [by_name[r.name] for r in wanted]


@dataclass(frozen=True)
class _Plan:
    """What every repository's walk in this run is allowed to do."""

    limits: Limits
    max_pages: int | None
    initial_since: str | None
    full_every_days: float
    force_full: bool


async def _run_group(
    host: IssueHost,
    repos: list[RepoInfo],
    state: SyncState,
    data_dir: Path,
    plan: _Plan,
    clock: Clock,
    progress: ProgressFn | None,
) -> list[RepoOutcome]:
    outcomes = []
    for repo in repos:
        outcome = await sync_repo(
            host, repo, state, data_dir, plan.limits, plan.max_pages, clock, plan.initial_since,
            full_every_days=plan.full_every_days, force_full=plan.force_full,
        )
        outcomes.append(outcome)
        await say(progress, outcome.line())
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
    *,
    full_every_days: float = 7.0,
    force_full: bool = False,
) -> RepoOutcome:
    run = _RepoRun(host, repo, state, data_dir, limits, max_pages, clock)
    return await run.run(initial_since, full_every_days, force_full)


class _RepoRun:
    """One repository in one run: the walk (incremental, or a full listing that then removes the
    threads the host no longer lists), with the counters its outcome line reports."""

    def __init__(
        self, host: IssueHost, repo: RepoInfo, state: SyncState, data_dir: Path, limits: Limits, max_pages: int | None, clock: Clock
    ) -> None:
        self.host, self.repo, self.state, self.data_dir = host, repo, state, data_dir
        self.limits, self.max_pages, self.clock = limits, max_pages, clock
        self.started = clock.monotonic()
        self.new = self.updated = self.pages = self.skipped = self.removed = 0
        self.note = ""
        self.known: dict[int, str] = {}  # number -> newest stored updated_at
        self.listed: ListedNumbers | None = None  # during a full listing: every number it has seen

    def outcome(self, **extra: Any) -> RepoOutcome:
        seconds = self.clock.monotonic() - self.started
        return RepoOutcome(self.repo.name, self.new, self.updated, self.pages, seconds, self.skipped, removed=self.removed, note=self.note, **extra)

    async def run(self, initial_since: str | None, full_every_days: float, force_full: bool) -> RepoOutcome:
        name = self.repo.name
        entry = self.state.get(name)
        cursor = self._cursor(entry, initial_since, full_every_days, force_full)
        try:
            self.known = stored_versions(issues_path(self.data_dir, name))
            if cursor.full:
                self.listed = ListedNumbers.for_repo(self.data_dir, name)
                if cursor is entry.pending:
                    self.listed.load()  # resuming: the pages an earlier run read count as listed
                else:
                    self.listed.clear()
            done = await self._walk(cursor, persist=True)
            if done is None:
                return self.outcome(complete=False)
            self.state.put(name, replace(self.state.get(name), since=done.newest or done.since, synced_at=self._now(), pending=None))
            if done.full and not await self._remove_unlisted(done):
                return self.outcome(complete=False)
        except ApiError as exc:
            return self.outcome(error=str(exc))
        except BadItem as exc:  # the listing itself was not a list of issues (a proxy page, an API change)
            return self.outcome(error=f"{self.host.client.name} answered the issue listing with something else ({exc})")
        except OSError as exc:
            return self.outcome(error=f"could not read or write under {issues_dir(self.data_dir)} ({type(exc).__name__}: {exc.strerror or exc})")
        try:
            _compact_if_bloated(self.data_dir, name, len(self.known))
        except OSError as exc:  # the appended file is complete and readable; compaction can wait
            log.warning("issues of %s: compaction skipped (%s)", name, type(exc).__name__)
        return self.outcome()

    def _cursor(self, entry: RepoState, initial_since: str | None, full_every_days: float, force_full: bool) -> Pending:
        if entry.pending is not None and (entry.pending.full or not force_full):
            return entry.pending  # resume where the last run stopped (--full restarts an incremental walk as a full one)
        full = force_full or entry.since is None or self._full_due(entry, full_every_days)
        # A full listing starts at ISSUES_INITIAL_SINCE when set: the operator chose not to hold older threads.
        return Pending(since=initial_since if full else entry.since, next_page=1, newest=None, full=full)

    def _full_due(self, entry: RepoState, days: float) -> bool:
        if entry.full_listed_at is None:
            return True
        try:
            last = parse_time(entry.full_listed_at).timestamp()
        except ValueError:
            return True
        return self.clock.time() - last >= days * 86_400

    def _now(self) -> str:
        return datetime.fromtimestamp(self.clock.time(), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")

    async def _walk(self, cursor: Pending, *, persist: bool) -> Pending | None:
        """Walk the listing from `cursor` to its last page; the cursor past the last page, or None
        when --max-pages stopped it. `persist`: save the cursor after each stored page."""
        may_restart = cursor.next_path is not None  # a cursor saved by an earlier run may have expired
        while True:
            if self.max_pages is not None and self.pages >= self.max_pages:
                return None
            try:
                listed = await self.host.list_page(self.repo, cursor.since, cursor.next_page, cursor.next_path)
            except ApiError as exc:
                if not (may_restart and exc.status in (400, 404, 410, 422)):
                    raise
                # Walk again from the first page with the same `since`: what is stored is skipped
                # as unchanged, so this costs requests, not duplicates.
                cursor = replace(cursor, next_page=1, next_path=None)
                may_restart = False
                continue
            may_restart = False
            newest = await self._store(listed.items, cursor.newest)
            self.pages += 1
            cursor = replace(cursor, next_page=cursor.next_page + 1, newest=newest, pages=cursor.pages + 1, next_path=listed.next_path)
            if not listed.has_next:
                return cursor
            if persist:
                self.state.set_pending(self.repo.name, cursor)

    async def _store(self, items: Sequence[dict[str, Any]], newest: str | None) -> str | None:
        """Append the page's new and changed threads (fsynced); the newest updated_at so far."""
        batch: list[StoredIssue] = []
        numbers: list[int] = []
        for item in items:
            try:
                number = item_number(item)
                numbers.append(number)  # listed, whatever else is wrong with it: not to be removed
                updated_at = utc_iso(str(item["updated_at"]))
            except (BadItem, KeyError, ValueError):
                self.skipped += 1
                continue
            newest = updated_at if newest is None or parse_time(updated_at) > parse_time(newest) else newest
            if self.known.get(number) == updated_at:
                continue  # unchanged: the inclusive `since` boundary, or a page repeated on resume
            try:
                batch.append(to_stored(self.repo, item, await _comments(self.host, self.repo, item), self.limits))
            except BadItem:
                self.skipped += 1
        append_issues(self.data_dir, self.repo.name, batch)  # fsynced before the cursor moves past it
        for issue in batch:
            if issue.number in self.known:
                self.updated += 1
            else:
                self.new += 1
            self.known[issue.number] = issue.updated_at
        if self.listed is not None:
            self.listed.add(numbers)  # also before the cursor moves: a resumed walk knows these pages
        return newest

    async def _remove_unlisted(self, done: Pending) -> bool:
        """After a complete full listing: remove the stored threads it did not list. False when
        --max-pages stopped the catch-up below (nothing removed; the full listing stays due)."""
        assert self.listed is not None
        name = self.repo.name
        scope, missing = self._unlisted(done.since)
        if missing and done.newest is not None:
            # A thread updated while the walk ran moved to a page already read and was never listed:
            # everything updated since the walk's newest is listed once more, which finds it.
            caught = await self._walk(Pending(since=done.newest, next_page=1, newest=done.newest), persist=False)
            if caught is None:
                return False
            self.state.put(name, replace(self.state.get(name), since=caught.newest or done.newest))
            scope, missing = self._unlisted(done.since)
        if len(missing) > max(_REMOVAL_FLOOR, len(scope) * _REMOVAL_SHARE):
            self.note = f"{len(missing)} of {len(scope)} stored threads not listed: taken as a host fault, none removed"
        elif missing:
            self.removed = remove_issues(self.data_dir, name, missing)
        self.listed.clear()
        self.state.put(name, replace(self.state.get(name), full_listed_at=self._now()))
        return True

    def _unlisted(self, since: str | None) -> tuple[list[StoredIssue], list[int]]:
        """The stored threads this full listing covers, and the numbers of those it did not list."""
        assert self.listed is not None
        bound = parse_time(since) if since else None
        # GitCode's issue listing never shows pull requests (an import may hold some): not a sign of deletion.
        pulls_listed = self.repo.issue_host == "github"
        scope = [
            issue
            for issue in read_issue_file(issues_path(self.data_dir, self.repo.name)).issues
            if (pulls_listed or not issue.is_pull) and (bound is None or parse_time(issue.updated_at) >= bound)
        ]
        return scope, [issue.number for issue in scope if issue.number not in self.listed.numbers]


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


class IssuesBusy(Exception):
    pass


@contextmanager
def exclusive(data_dir: Path) -> Iterator[None]:
    """One writer of DATA_DIR/issues at a time (a sync or an import): two would interleave appends
    and cursors, and a full listing's rewrite would drop what the other appended meanwhile."""
    folder = issues_dir(data_dir)
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".sync.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise IssuesBusy(f"another issue sync or import is running on {folder}") from None
        yield
    finally:
        os.close(fd)


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


async def run_issues_sync(
    settings: Settings, repos: Sequence[str], max_pages: int | None = None, clock: Clock | None = None, full: bool = False
) -> int:
    """The `sync --issues` command: one line per repository, exit 1 when any failed."""

    def say(line: str) -> None:
        print(line, flush=True)

    outcomes = await sync_issues(settings, repos, max_pages=max_pages, clock=clock, progress=say, full=full)
    indexed = await reindex_changed(settings, [o.repo for o in outcomes if o.ok and o.changed], say)
    # what upstream said on escalated issues goes back to their threads (opt-in per workspace)
    followed = await run_followups(settings, say)
    return 0 if indexed and followed and all(o.ok for o in outcomes) else 1
