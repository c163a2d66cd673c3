"""`python -m bot sync --issues` against local fakes of the GitHub and GitCode listing APIs.

Real httpx over loopback; time is a FakeClock, so rate-limit waits and backoffs are recorded,
never slept.
"""
from __future__ import annotations

import importlib.machinery
import json
import logging
import sys
import types
from pathlib import Path

import httpx
import pytest

from bot.cli import main
from bot.issues.http import ApiError, HostClient, Policy
from bot.issues.state import SyncState
from bot.issues.sync import run_issues_sync, sync_issues
from bot.settings import Settings
from core.issue_store import IssueComment, issues_path, iter_issues, read_issue_file
from tests.support.fake_issue_host import FakeClock, FakeIssueHost, HostedIssue, note

ASCEND = "vllm-project/vllm-ascend"  # on GitHub under the same name
MINDIE = "verylucky01/MindIE-LLM"  # canonical name; its issues live on GitCode as Ascend/MindIE-LLM
MINDIE_HOST = "Ascend/MindIE-LLM"
GH_TOKEN = "ghp_" + "T" * 36
GC_TOKEN = "gitcode-secret-token-0123456789"


def issues(count: int, start: int = 1, *, day: int = 1, prs: tuple[int, ...] = ()) -> list[HostedIssue]:
    """Issues numbered from `start`, each updated one hour after the previous one."""
    made = []
    for n in range(start, start + count):
        made.append(HostedIssue(number=n, title=f"issue {n}", updated_at=f"2026-05-{day:02d}T{n % 24:02d}:00:00Z", pull_request=n in prs))
    return made


def settings_for(tmp_path: Path, github: FakeIssueHost | None = None, gitcode: FakeIssueHost | None = None, **extra: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": tmp_path / "data",
        "github_api_url": github.api_url if github else "http://127.0.0.1:9",
        "gitcode_api_url": gitcode.api_url if gitcode else "http://127.0.0.1:9",
        "github_token": None,
        "gitcode_token": None,
        "issues_page_size": 3,
        "issues_retries": 3,
        "issues_gitcode_min_interval_seconds": 0,
        "repos_dir": tmp_path / "repos",  # no clones: a re-index after the sync reads issues only
    }
    values.update(extra)
    return Settings(_env_file=None, **values)  # type: ignore[call-arg]


def repo_lines(printed: str) -> list[str]:
    """The command's one line per repository ("owner/name: …"), without the index's own lines."""
    return [line for line in printed.strip().splitlines() if line.split(" ", 1)[0].endswith(":") and "/" in line.split(" ", 1)[0]]


def numbers(data_dir: Path, repo: str) -> list[int]:
    return [i.number for i in iter_issues(data_dir, repo)]


def line_count(data_dir: Path, repo: str) -> int:
    return len(issues_path(data_dir, repo).read_text(encoding="utf-8").splitlines())


# --- pagination, pull requests, comments --------------------------------------------------------


async def test_github_three_pages_pull_requests_kept_comments_with_roles(tmp_path: Path) -> None:
    rows = issues(9, prs=(3, 7))  # 7 issues and 2 pull requests: three pages of 3
    closed = rows[0]
    closed.state, closed.closed_at = "closed", "2026-05-01T01:30:00Z"
    closed.comments = [
        note("someone", "me too"),
        note("dev1", "fixed by the patch in 0.9", "MEMBER"),
        note("bot", "stale", "NONE"),
        note("dev2", "closing: upgrade CANN", "COLLABORATOR"),
    ]
    rows[1].body = "x" * 50_000  # a pasted log
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        out = await sync_issues(settings_for(tmp_path, gh, issues_body_max_chars=1000), [ASCEND], clock=clock)
        listing = gh.listing_requests(ASCEND)
        gh_pages = gh.pages(ASCEND)
        comment_paths = gh.comment_requests()

    assert gh_pages == [1, 2, 3]
    assert ["after" in q for q in listing] == [False, True, True]  # then the Link header's cursor
    assert all(q["state"] == "all" and q["sort"] == "updated" and q["direction"] == "desc" for q in listing)
    assert "since" not in listing[0]  # first sync: everything
    assert out[0].ok and (out[0].new, out[0].pages) == (9, 3)
    data = tmp_path / "data"
    assert numbers(data, ASCEND) == list(range(1, 10))
    stored = {i.number: i for i in iter_issues(data, ASCEND)}
    assert [n for n, i in stored.items() if i.is_pull] == [3, 7]  # a pull request names what it fixes: kept
    assert stored[3].url == f"https://github.com/{ASCEND}/pull/3" and stored[3].kind == "pull"
    assert stored[1].author == "reporter" and stored[1].kind == "issue"
    # every comment, with its role: the resolution records tell a maintainer's fix from "me too"
    assert [(c.author, c.association) for c in stored[1].comments] == [
        ("someone", "NONE"), ("dev1", "MEMBER"), ("bot", "NONE"), ("dev2", "COLLABORATOR")]
    assert stored[1].comments[0].created_at == "2026-05-01T00:00:00Z"
    assert stored[1].state == "closed" and stored[1].closed_at == "2026-05-01T01:30:00Z"
    assert comment_paths == [f"/repos/{ASCEND}/issues/1/comments"]  # only threads with comments
    assert len(stored[2].body) < 1100 and "truncated 49000 characters" in stored[2].body
    assert stored[4].url == f"https://github.com/{ASCEND}/issues/4"
    state = SyncState.load(data).get(ASCEND)
    assert state.pending is None and state.since == "2026-05-01T09:00:00Z"  # newest updated_at seen


async def test_gitcode_pages_by_total_page_and_keeps_last_comments(tmp_path: Path) -> None:
    rows = issues(7, day=2)
    rows[6].state, rows[6].closed_at = "closed", "2026-05-02T08:00:00+08:00"
    rows[6].comments = [note(f"user{i}", f"comment {i}") for i in range(1, 9)]
    clock = FakeClock()
    async with FakeIssueHost("gitcode", {MINDIE_HOST: rows}, clock) as gc:
        out = await sync_issues(settings_for(tmp_path, gitcode=gc, issues_max_comments=3), [MINDIE], clock=clock)
        listing = gc.listing_requests(MINDIE_HOST)

    assert [q["page"] for q in listing] == ["1", "2", "3"]  # GitCode pages by number
    assert out[0].ok and out[0].new == 7
    stored = {i.number: i for i in iter_issues(tmp_path / "data", MINDIE)}
    assert sorted(stored) == list(range(1, 8))  # string numbers from GitCode become integers
    last = stored[7]
    assert [c.body for c in last.comments] == ["comment 6", "comment 7", "comment 8"]  # the last three, in order
    assert last.state == "closed" and last.closed_at == "2026-05-02T00:00:00Z"  # finished_at, in UTC
    assert stored[1].state == "open"  # "opened" on GitCode
    assert last.url == f"https://gitcode.com/{MINDIE_HOST}/issues/7"


# --- rate limits ---------------------------------------------------------------------------------


async def test_github_budget_at_zero_waits_for_the_reset_then_continues(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh:
        gh.exhaust_budget(after_responses=1, reset_in=120)  # page 1 says remaining 0
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)
        early = gh.early_requests
        pages = gh.pages(ASCEND)

    assert out[0].ok and out[0].new == 9
    assert early == 0  # no request was sent before the reset
    assert pages == [1, 2, 3]
    assert 120 <= sum(clock.sleeps) <= 125


async def test_github_403_rate_limited_is_retried_after_the_reset(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(4)}, clock) as gh:
        gh.exhaust_budget(after_responses=0, reset_in=300)  # the first request is refused
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)
        early = gh.early_requests

    assert out[0].ok and out[0].new == 4
    assert early == 1
    assert 300 <= sum(clock.sleeps) <= 305


async def test_rate_limit_longer_than_allowed_stops_the_repo_and_a_rerun_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh:
        settings = settings_for(tmp_path, gh, issues_max_wait_seconds=600)
        gh.exhaust_budget(after_responses=1, reset_in=3600)
        code = await run_issues_sync(settings, [ASCEND], clock=clock)
        printed = capsys.readouterr().out
        assert code == 1
        assert "rate limit" in printed and "rerun" in printed and "GITHUB_TOKEN raises the limit" in printed
        assert sum(clock.sleeps) == 0  # it did not sit out the hour
        assert numbers(tmp_path / "data", ASCEND) == [7, 8, 9]  # page 1 (newest first) was kept
        assert SyncState.load(tmp_path / "data").get(ASCEND).pending.next_page == 2

        clock.now += 3600
        assert await run_issues_sync(settings, [ASCEND], clock=clock) == 0
        pages = gh.pages(ASCEND)

    assert pages == [1, 2, 3]  # the rerun started at page 2, from the saved cursor
    assert numbers(tmp_path / "data", ASCEND) == list(range(1, 10))


async def test_gitcode_429_waits_retry_after(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("gitcode", {MINDIE_HOST: issues(5)}, clock) as gc:
        gc.throttle(requests=2, retry_after=7)
        out = await sync_issues(settings_for(tmp_path, gitcode=gc), [MINDIE], clock=clock)

    assert out[0].ok and out[0].new == 5
    assert clock.sleeps == [7.0, 7.0]


async def test_gitcode_requests_are_paced(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("gitcode", {MINDIE_HOST: issues(9)}, clock) as gc:
        out = await sync_issues(settings_for(tmp_path, gitcode=gc, issues_gitcode_min_interval_seconds=1.2), [MINDIE], clock=clock)

    assert out[0].ok
    assert clock.sleeps == [1.2, 1.2]  # three listing requests, none back to back


# --- server errors and resuming ------------------------------------------------------------------


async def test_5xx_in_the_middle_is_retried_with_backoff(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh:
        gh.fail_listing(503, pages={2}, times=2)
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)
        pages = gh.pages(ASCEND)
        requests = len(gh.listing_requests(ASCEND))

    assert out[0].ok and out[0].new == 9
    assert pages == [1, 2, 3] and requests == 5  # page 2 asked three times
    assert clock.sleeps == [1.0, 2.0]


async def test_persistent_5xx_fails_that_repo_only_and_a_rerun_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock()
    async with (
        FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh,
        FakeIssueHost("gitcode", {MINDIE_HOST: issues(2)}, clock) as gc,
    ):
        settings = settings_for(tmp_path, gh, gc)
        gh.fail_listing(502, pages={2}, times=None)
        code = await run_issues_sync(settings, [ASCEND, MINDIE], clock=clock)
        lines = repo_lines(capsys.readouterr().out)
        data = tmp_path / "data"
        state = SyncState.load(data).get(ASCEND)
        assert code == 1
        assert len(lines) == 2
        assert lines[0].startswith(f"{MINDIE}: 2 new") or lines[1].startswith(f"{MINDIE}: 2 new")
        failed = next(line for line in lines if line.startswith(ASCEND))
        assert "failed" in failed and "502" in failed
        assert state.since is None and state.pending is not None and state.pending.next_page == 2  # cursor not advanced
        assert numbers(data, ASCEND) == [7, 8, 9]

        gh.clear_faults()
        before = len(gh.pages(ASCEND))
        assert await run_issues_sync(settings, [ASCEND], clock=clock) == 0
        resumed = gh.pages(ASCEND)[before:]

    assert resumed == [2, 3]
    assert numbers(data, ASCEND) == list(range(1, 10))
    assert SyncState.load(data).get(ASCEND).since == "2026-05-01T09:00:00Z"


async def test_crash_after_a_page_is_stored_resumes_without_duplicates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    saves = {"n": 0}
    real = SyncState.set_pending

    def crash_on_second(self: SyncState, repo: str, pending: object) -> None:
        saves["n"] += 1
        if saves["n"] == 2:
            raise RuntimeError("simulated crash between storing page 2 and saving its cursor")
        real(self, repo, pending)  # type: ignore[arg-type]

    async with FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        monkeypatch.setattr(SyncState, "set_pending", crash_on_second)
        with pytest.raises(RuntimeError):
            await sync_issues(settings, [ASCEND], clock=clock)
        monkeypatch.setattr(SyncState, "set_pending", real)
        data = tmp_path / "data"
        assert numbers(data, ASCEND) == [4, 5, 6, 7, 8, 9]  # page 2 reached the disk
        before = len(gh.pages(ASCEND))
        out = await sync_issues(settings, [ASCEND], clock=clock)
        resumed = gh.pages(ASCEND)[before:]

    assert resumed == [2, 3]  # from the last saved cursor
    assert out[0].ok and (out[0].new, out[0].updated) == (3, 0)  # page 2 repeated, nothing rewritten
    assert line_count(data, ASCEND) == 9


async def test_max_pages_stops_early_and_the_next_run_continues(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        first = await sync_issues(settings, [ASCEND], max_pages=1, clock=clock)
        second = await sync_issues(settings, [ASCEND], clock=clock)
        pages = gh.pages(ASCEND)

    assert first[0].ok and not first[0].complete and "rerun continues" in first[0].line()
    assert (first[0].pages, second[0].pages) == (1, 2)
    assert pages == [1, 2, 3]
    assert numbers(tmp_path / "data", ASCEND) == list(range(1, 10))


async def test_an_expired_saved_cursor_restarts_the_walk_without_duplicates(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(9)}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], max_pages=1, clock=clock)
        gh.expire_cursors()
        out = await sync_issues(settings, [ASCEND], clock=clock)
        pages = gh.pages(ASCEND)

    assert out[0].ok and (out[0].new, out[0].updated) == (6, 0)
    assert pages == [1, 1, 2, 3]  # the saved cursor was refused: walked again from page 1
    assert line_count(tmp_path / "data", ASCEND) == 9
    assert SyncState.load(tmp_path / "data").get(ASCEND).pending is None


def test_a_next_link_to_another_host_is_not_followed() -> None:
    client = HostClient(httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(500))), "github", "http://127.0.0.1:9/api", "tok", Policy(), FakeClock())
    assert client.relative("http://127.0.0.1:9/api/repositories/1/issues?after=x") == "/repositories/1/issues?after=x"
    with pytest.raises(ApiError):
        client.relative("https://elsewhere.example/repositories/1/issues?after=x")
    with pytest.raises(ApiError):
        client.relative("http://127.0.0.1:9/apix/issues")


# --- incremental -----------------------------------------------------------------------------------


async def test_second_run_asks_since_the_newest_update_and_merges(tmp_path: Path) -> None:
    clock = FakeClock()
    rows = issues(5)
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], clock=clock)
        rows[1].title, rows[1].updated_at = "issue 2, now with the answer", "2026-05-03T10:00:00Z"
        rows.append(HostedIssue(number=6, title="a new one", updated_at="2026-05-03T11:00:00Z"))
        before = len(gh.listing_requests(ASCEND))
        out = await sync_issues(settings, [ASCEND], clock=clock)
        second = gh.listing_requests(ASCEND)[before:]

    assert second[0]["since"] == "2026-05-01T05:00:00Z"  # the newest updated_at of the first run
    assert (out[0].new, out[0].updated) == (1, 1)
    stored = {i.number: i for i in iter_issues(tmp_path / "data", ASCEND)}
    assert sorted(stored) == [1, 2, 3, 4, 5, 6]
    assert stored[2].title == "issue 2, now with the answer"
    assert line_count(tmp_path / "data", ASCEND) == 7  # the unchanged boundary issue was not rewritten
    assert SyncState.load(tmp_path / "data").get(ASCEND).since == "2026-05-03T11:00:00Z"


async def test_gitcode_since_is_sent_as_an_offset_timestamp(tmp_path: Path) -> None:
    clock = FakeClock()
    async with FakeIssueHost("gitcode", {MINDIE_HOST: issues(2)}, clock) as gc:
        settings = settings_for(tmp_path, gitcode=gc)
        await sync_issues(settings, [MINDIE], clock=clock)
        await sync_issues(settings, [MINDIE], clock=clock)
        second = gc.listing_requests(MINDIE_HOST)[-1]

    assert second["since"] == "2026-05-01T02:00:00+00:00"


# --- secrets ---------------------------------------------------------------------------------------


async def test_tokens_go_in_the_header_and_nowhere_else(tmp_path: Path, capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    clock = FakeClock()
    async with (
        FakeIssueHost("github", {ASCEND: issues(4)}, clock) as gh,
        FakeIssueHost("gitcode", {MINDIE_HOST: issues(4)}, clock) as gc,
    ):
        settings = settings_for(tmp_path, gh, gc, github_token=GH_TOKEN, gitcode_token=GC_TOKEN)
        gc.fail_listing(500, pages={2}, times=None)  # the error path prints too
        code = await run_issues_sync(settings, [ASCEND, MINDIE], clock=clock)
        gh_auth = {r.headers.get("authorization") for r in gh.server.requests}
        gc_auth = {r.headers.get("authorization") for r in gc.server.requests}
        urls = [json.dumps(r.query) for r in gh.server.requests + gc.server.requests]

    assert code == 1
    assert gh_auth == {f"Bearer {GH_TOKEN}"} and gc_auth == {f"Bearer {GC_TOKEN}"}
    captured = capsys.readouterr()
    written = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (tmp_path / "data").rglob("*") if p.is_file())
    for token in (GH_TOKEN, GC_TOKEN):
        assert token not in captured.out + captured.err
        assert token not in caplog.text
        assert token not in written
        assert not any(token in u for u in urls)
    assert "MindIE-LLM: failed" in captured.out


# --- bad input -------------------------------------------------------------------------------------


def test_corrupt_lines_are_skipped_and_counted(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = issues_path(tmp_path, ASCEND)
    path.parent.mkdir(parents=True)
    good = {
        "repo": ASCEND, "number": 1, "url": "https://github.com/x/issues/1", "title": "old", "body": "", "labels": [],
        "state": "open", "created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-02T00:00:00Z", "closed_at": None, "comments": [],
    }
    newer = {**good, "title": "new", "updated_at": "2026-01-03T00:00:00Z"}
    lines = [
        json.dumps(newer),
        "{not json",
        json.dumps({**good, "number": "seven"}),
        json.dumps(good),  # an older version after the newer one: still loses
        json.dumps([1, 2]),
        json.dumps({**good, "number": 2})[:40],  # a partial last line, as a crash leaves it
    ]
    path.write_bytes(("\n".join(lines)).encode() + b"\xff\xfe\n")
    caplog.set_level(logging.WARNING)

    stored = list(iter_issues(tmp_path, ASCEND))

    assert [(i.number, i.title) for i in stored] == [(1, "new")]
    assert read_issue_file(path).skipped_lines == 4
    assert "skipped 4 corrupt line(s)" in caplog.text


async def test_a_partial_last_line_does_not_swallow_the_next_append(tmp_path: Path) -> None:
    clock = FakeClock()
    path = issues_path(tmp_path / "data", ASCEND)
    path.parent.mkdir(parents=True)
    path.write_text('{"repo": "vllm-project/vllm-asc', encoding="utf-8")  # no newline: a crash mid-write
    async with FakeIssueHost("github", {ASCEND: issues(2)}, clock) as gh:
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)

    assert out[0].ok
    assert numbers(tmp_path / "data", ASCEND) == [1, 2]
    assert read_issue_file(path).skipped_lines == 1


async def test_a_listing_that_is_not_a_list_fails_that_repository_cleanly(tmp_path: Path) -> None:
    clock = FakeClock()
    async with (
        FakeIssueHost("github", {ASCEND: issues(6)}, clock) as gh,
        FakeIssueHost("gitcode", {MINDIE_HOST: issues(2)}, clock) as gc,
    ):
        gh.fail_listing(200, pages={2}, times=None)
        out = await sync_issues(settings_for(tmp_path, gh, gc), [ASCEND, MINDIE], clock=clock)

    assert not out[0].ok and "GitHub answered the issue listing with something else" in out[0].line()
    assert out[1].ok and out[1].new == 2
    assert SyncState.load(tmp_path / "data").get(ASCEND).pending.next_path is not None  # resumes at page 2


async def test_unknown_repository_is_a_clear_failure(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = await run_issues_sync(settings_for(tmp_path), ["someone/else"], clock=FakeClock())
    assert code == 1
    assert capsys.readouterr().out.strip() == "someone/else: failed: not an allowlisted repository"
    assert not (tmp_path / "data" / "issues" / "someone").exists()


def test_max_pages_needs_issues_and_a_positive_number(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # main() would install a root log handler on the captured stderr, which outlives this test
    monkeypatch.setattr("bot.cli.configure_logging", lambda *a, **k: None)
    for argv in (["sync", "--max-pages", "2"], ["sync", "--issues", "--max-pages", "0"]):
        with pytest.raises(SystemExit) as exited:
            main(argv)
        assert exited.value.code == 2
    assert "--max-pages" in capsys.readouterr().err


# --- index hook --------------------------------------------------------------------------------------


async def test_changed_repositories_are_handed_to_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    module = types.ModuleType("bot.index_command")
    module.__spec__ = importlib.machinery.ModuleSpec("bot.index_command", None)

    def refresh_index(settings: Settings, repos: list[str] | None, say: object = print) -> None:
        calls.append(list(repos or []))

    module.refresh_index = refresh_index  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bot.index_command", module)
    clock = FakeClock()
    async with (
        FakeIssueHost("github", {ASCEND: issues(2)}, clock) as gh,
        FakeIssueHost("gitcode", {MINDIE_HOST: []}, clock) as gc,
    ):
        settings = settings_for(tmp_path, gh, gc)
        assert await run_issues_sync(settings, [ASCEND, MINDIE], clock=clock) == 0
        assert await run_issues_sync(settings, [ASCEND, MINDIE], clock=clock) == 0

    assert calls == [[ASCEND]]  # MindIE-LLM had nothing; the second run changed nothing


async def test_a_failed_reindex_is_one_line_and_a_non_zero_exit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    module = types.ModuleType("bot.index_command")
    module.__spec__ = importlib.machinery.ModuleSpec("bot.index_command", None)

    def refresh_index(settings: Settings, repos: list[str] | None, say: object = print) -> None:
        raise OSError("disk full")

    module.refresh_index = refresh_index  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "bot.index_command", module)
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(2)}, clock) as gh:
        code = await run_issues_sync(settings_for(tmp_path, gh), [ASCEND], clock=clock)

    assert code == 1
    assert "index: not refreshed (OSError: disk full)" in capsys.readouterr().out
    assert numbers(tmp_path / "data", ASCEND) == [1, 2]  # the download itself is kept


async def test_synced_issues_are_searchable_with_their_url(tmp_path: Path) -> None:
    """End to end with the real index: the issue's words find it, and its URL is the permalink."""
    rows = issues(3)
    rows[1].title = "aclnnMatmul fails with error 507015 on Atlas 800I A2"
    rows[1].body = "Serving Qwen with graph mode stops with 507015 after warmup."
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        assert await run_issues_sync(settings, [ASCEND], clock=clock) == 0

    from core.index.search import KnowledgeIndex  # noqa: PLC0415 - the index is another module's work

    index = KnowledgeIndex.open_if_present(settings.index_path)
    assert index is not None
    found = index.search("507015 aclnnMatmul", [ASCEND], k=3)
    assert found and found[0].kind == "issue" and found[0].url == f"https://github.com/{ASCEND}/issues/2"


# --- long threads and the first sync's lower bound --------------------------------------------------


async def test_long_closed_thread_reads_the_last_comment_page_for_the_closing_answer(tmp_path: Path) -> None:
    rows = issues(1)
    rows[0].state, rows[0].closed_at = "closed", "2026-05-01T02:00:00Z"
    rows[0].comments = [note(f"u{i}", f"+1 #{i}") for i in range(150)] + [note("maint", "fixed in v0.9.1", "OWNER")]
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)
        asked = [r.query.get("page", "1") for r in gh.server.requests if r.path.endswith("/comments")]

    assert out[0].ok
    assert asked == ["1", "2"]  # the first page, then the last one (from the Link header)
    (stored,) = iter_issues(tmp_path / "data", ASCEND)
    assert stored.comments[-1] == IssueComment("maint", "OWNER", "fixed in v0.9.1", "2026-05-01T00:00:00Z")
    assert len(stored.comments) == 10  # ISSUES_MAX_COMMENTS: the closing answer and the last chatter


async def test_initial_since_bounds_only_the_first_sync(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(3)}, clock) as gh:
        settings = settings_for(tmp_path, gh, issues_initial_since="2026-04-15")
        await sync_issues(settings, [ASCEND], clock=clock)
        await sync_issues(settings, [ASCEND], clock=clock)
        sinces = [q.get("since") for q in gh.listing_requests(ASCEND)]
        bad = await run_issues_sync(settings_for(tmp_path, gh, issues_initial_since="last tuesday"), [ASCEND], clock=clock)

    assert sinces == ["2026-04-15T00:00:00Z", "2026-05-01T03:00:00Z"]
    assert bad == 1 and "ISSUES_INITIAL_SINCE is not a date" in capsys.readouterr().out


async def test_the_command_line_end_to_end(tmp_path: Path) -> None:
    """`python -m bot sync --issues` in a real process, configured by environment variables."""
    import asyncio  # noqa: PLC0415
    import os  # noqa: PLC0415

    async with FakeIssueHost("github", {ASCEND: issues(4, prs=(2,))}) as gh:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("GITHUB", "GITCODE", "ISSUES_"))},
            "DATA_DIR": str(tmp_path / "data"),
            "REPOS_DIR": str(tmp_path / "repos"),
            "GITHUB_API_URL": gh.api_url,
            "GITHUB_TOKEN": GH_TOKEN,
        }
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot", "sync", "--issues", ASCEND, "--max-pages", "3",
            cwd=tmp_path, env={**env, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)

    text = out.decode() + err.decode()
    assert proc.returncode == 0, text
    (line,) = repo_lines(out.decode())
    assert line.startswith(f"{ASCEND}: 4 new, 0 updated threads, 1 page(s)")  # 3 issues and a pull request
    assert GH_TOKEN not in text
    assert numbers(tmp_path / "data", ASCEND) == [1, 2, 3, 4]


async def test_an_unwritable_data_dir_fails_the_repository_with_one_line(tmp_path: Path) -> None:
    clock = FakeClock()
    target = issues_path(tmp_path / "data", ASCEND)
    target.parent.mkdir(parents=True)
    target.mkdir()  # a directory where the issue file should be: every open fails
    async with FakeIssueHost("github", {ASCEND: issues(2)}, clock) as gh:
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)

    assert not out[0].ok and "could not read or write under" in out[0].line()
    assert SyncState.load(tmp_path / "data").get(ASCEND).since is None


async def test_a_year_zero_date_is_one_unusable_item_not_a_crash(tmp_path: Path) -> None:
    rows = issues(3)
    rows[1].created_at = "0001-01-01T00:00:00+08:00"  # before year 1 once in UTC: OverflowError before
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        out = await sync_issues(settings_for(tmp_path, gh), [ASCEND], clock=clock)
    assert out[0].ok and out[0].skipped == 1
    assert numbers(tmp_path / "data", ASCEND) == [1, 3]


def test_a_lone_surrogate_from_an_api_is_stored_not_a_crash(tmp_path: Path) -> None:
    from core.issue_store import StoredIssue, append_issues  # noqa: PLC0415

    issue = StoredIssue(ASCEND, 1, f"https://github.com/{ASCEND}/issues/1", "broken \ud800 title", "", (), "open",
                        "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", None)
    assert append_issues(tmp_path, ASCEND, [issue]) == 1  # UnicodeEncodeError before
    (stored,) = iter_issues(tmp_path, ASCEND)
    assert stored.title == "broken ? title"
