"""Threads the host no longer lists leave the store and the index (issue 21, item 1).

Every ISSUES_FULL_LISTING_DAYS (or with `sync --issues --full`) a sync lists everything, and when
that walk completes it removes the stored threads it did not see. Against the loopback fakes of
test_issues_sync.py, with a FakeClock that only moves when a test moves it.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.cli import main
from bot.issues.state import ListedNumbers, StateError, SyncState
from bot.issues.sync import RepoOutcome, run_issues_sync, sync_issues
from core.issue_store import StoredIssue, append_issues, issues_path, read_issue_file, remove_issues
from tests.bot.test_issues_sync import ASCEND, MINDIE, MINDIE_HOST, issues, line_count, numbers, repo_lines, settings_for
from tests.support.fake_issue_host import FakeClock, FakeIssueHost, HostedIssue

DAY = 86_400.0


def drop(rows: list[HostedIssue], *gone: int) -> None:
    """The host deletes these threads (spam, a transfer): they vanish from its listing."""
    rows[:] = [r for r in rows if r.number not in gone]


def full_walks(gh: FakeIssueHost, repo: str) -> int:
    """Listing walks started without `since`: first pages asked by number, not by a Link cursor."""
    return sum(1 for q in gh.listing_requests(repo) if "since" not in q and "after" not in q)


def thread(repo: str, number: int, updated: str, *, kind: str = "issue", title: str = "") -> StoredIssue:
    return StoredIssue(
        repo=repo, number=number, url=f"https://example.invalid/{number}", title=title or f"thread {number}", body="",
        labels=(), state="open", created_at="2020-01-01T00:00:00Z", updated_at=updated, closed_at=None, kind=kind,
    )


# --- when a full listing happens -------------------------------------------------------------------


async def test_every_n_days_a_full_listing_removes_what_the_host_no_longer_lists(tmp_path: Path) -> None:
    rows = issues(6)
    clock = FakeClock()
    data = tmp_path / "data"
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh, issues_full_listing_days=7)
        first = await sync_issues(settings, [ASCEND], clock=clock)
        assert SyncState.load(data).get(ASCEND).full_listed_at == "2027-01-15T08:00:00Z"  # the first walk is a full one

        drop(rows, 2, 5)
        clock.now += 6 * DAY
        soon = await sync_issues(settings, [ASCEND], clock=clock)  # incremental: cannot tell a deletion
        assert (soon[0].removed, numbers(data, ASCEND)) == (0, [1, 2, 3, 4, 5, 6])
        assert full_walks(gh, ASCEND) == 1

        clock.now += 1 * DAY
        due = await sync_issues(settings, [ASCEND], clock=clock)
        walks = full_walks(gh, ASCEND)

    assert first[0].ok and first[0].removed == 0
    assert walks == 2  # seven days after the last one
    assert due[0].ok and due[0].removed == 2 and due[0].changed
    assert due[0].line().endswith(", 2 removed (no longer listed)")
    assert numbers(data, ASCEND) == [1, 3, 4, 6]
    assert line_count(data, ASCEND) == 4  # rewritten, not appended to: every version of 2 and 5 is gone
    assert SyncState.load(data).get(ASCEND).full_listed_at == "2027-01-22T08:00:00Z"
    assert not ListedNumbers.for_repo(data, ASCEND).path.exists()  # the walk's numbers are not kept


async def test_sync_issues_full_lists_everything_now(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = issues(4)
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], clock=clock)
        capsys.readouterr()
        drop(rows, 3)
        code = await run_issues_sync(settings, [ASCEND], clock=clock, full=True)
        walks = full_walks(gh, ASCEND)

    assert code == 0 and walks == 2
    (line,) = repo_lines(capsys.readouterr().out)
    assert line.startswith(f"{ASCEND}: 0 new, 0 updated threads") and "1 removed (no longer listed)" in line
    assert numbers(tmp_path / "data", ASCEND) == [1, 2, 4]


def test_full_needs_issues(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("bot.cli.configure_logging", lambda *a, **k: None)
    with pytest.raises(SystemExit) as exited:
        main(["sync", "--full"])
    assert exited.value.code == 2
    assert "--full only applies with --issues" in capsys.readouterr().err


# --- a walk that stops early removes nothing -------------------------------------------------------


async def test_a_full_listing_cut_by_max_pages_removes_nothing_and_the_rest_resumes(tmp_path: Path) -> None:
    rows = issues(12)
    clock = FakeClock()
    data = tmp_path / "data"
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], clock=clock)
        drop(rows, 1, 11)
        clock.now += 8 * DAY
        cut = await sync_issues(settings, [ASCEND], max_pages=2, clock=clock)
        assert not cut[0].complete and cut[0].removed == 0
        assert numbers(data, ASCEND) == list(range(1, 13))
        pending = SyncState.load(data).get(ASCEND).pending
        assert pending is not None and pending.full and pending.next_page == 3
        before = len(gh.pages(ASCEND))
        rest = await sync_issues(settings, [ASCEND], clock=clock)
        resumed = gh.pages(ASCEND)[before:]

    # pages 3 and 4 of the full walk, then one page of threads updated since it began
    assert resumed == [3, 4, 1]
    # the pages read by the first run count too (DATA_DIR/issues/…/<name>.listed): only 1 and 11 go
    assert rest[0].ok and rest[0].removed == 2
    assert numbers(data, ASCEND) == [2, 3, 4, 5, 6, 7, 8, 9, 10, 12]


async def test_a_full_listing_that_fails_removes_nothing(tmp_path: Path) -> None:
    rows = issues(9)
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], clock=clock)
        drop(rows, 4)
        gh.fail_listing(502, pages={2}, times=None)
        failed = await sync_issues(settings, [ASCEND], clock=clock, full=True)

    assert not failed[0].ok and failed[0].removed == 0
    assert numbers(tmp_path / "data", ASCEND) == list(range(1, 10))
    state = SyncState.load(tmp_path / "data").get(ASCEND)
    assert state.pending is not None and state.pending.full  # a rerun resumes the full listing


async def test_a_thread_updated_during_the_walk_is_not_removed(tmp_path: Path) -> None:
    """It moved to a page already read, so the walk never listed it; the catch-up listing does."""
    rows = issues(9)
    clock = FakeClock()
    data = tmp_path / "data"
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], clock=clock)
        await sync_issues(settings, [ASCEND], max_pages=1, clock=clock, full=True)  # read page 1: 9, 8, 7
        oldest = rows[0]
        oldest.title, oldest.updated_at = "issue 1, answered meanwhile", "2026-05-02T00:00:00Z"  # now first on page 1
        out = await sync_issues(settings, [ASCEND], clock=clock)
        asked = gh.listing_requests(ASCEND)[-1]

    assert asked["since"] == "2026-05-01T09:00:00Z"  # the catch-up: everything updated since the walk's newest
    assert out[0].ok and out[0].removed == 0 and out[0].updated == 1
    stored = {i.number: i for i in read_issue_file(issues_path(data, ASCEND)).issues}
    assert sorted(stored) == list(range(1, 10)) and stored[1].title == "issue 1, answered meanwhile"
    assert SyncState.load(data).get(ASCEND).since == "2026-05-02T00:00:00Z"


async def test_a_listing_that_lacks_most_threads_is_taken_as_a_host_fault(tmp_path: Path) -> None:
    rows = issues(12)
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)
        await sync_issues(settings, [ASCEND], clock=clock)
        drop(rows, *range(1, 11))  # 10 of 12 gone at once: an empty proxy page, not spam cleaning
        out = await sync_issues(settings, [ASCEND], clock=clock, full=True)

    assert out[0].ok and out[0].removed == 0
    assert "10 of 12 stored threads not listed: taken as a host fault, none removed" in out[0].line()
    assert numbers(tmp_path / "data", ASCEND) == list(range(1, 13))


# --- what a full listing can judge ------------------------------------------------------------------


async def test_gitcode_never_lists_pull_requests_so_stored_ones_stay(tmp_path: Path) -> None:
    data = tmp_path / "data"
    append_issues(data, MINDIE, [thread(MINDIE, 50, "2026-05-01T00:00:00Z", kind="pull"), thread(MINDIE, 51, "2026-05-01T00:00:00Z")])
    clock = FakeClock()
    async with FakeIssueHost("gitcode", {MINDIE_HOST: issues(3)}, clock) as gc:
        out = await sync_issues(settings_for(tmp_path, gitcode=gc), [MINDIE], clock=clock)

    assert out[0].ok and out[0].removed == 1  # the issue the host does not list; the pull request is not its to judge
    assert numbers(data, MINDIE) == [1, 2, 3, 50]


async def test_threads_older_than_issues_initial_since_are_not_judged(tmp_path: Path) -> None:
    data = tmp_path / "data"
    append_issues(data, ASCEND, [thread(ASCEND, 70, "2024-06-01T00:00:00Z"), thread(ASCEND, 71, "2026-04-20T00:00:00Z")])
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: issues(3)}, clock) as gh:
        settings = settings_for(tmp_path, gh, issues_initial_since="2026-01-01")
        out = await sync_issues(settings, [ASCEND], clock=clock)

    # 70 predates the listing's lower bound, so its absence says nothing; 71 would have been listed
    assert out[0].ok and out[0].removed == 1
    assert numbers(data, ASCEND) == [1, 2, 3, 70]


# --- the index follows --------------------------------------------------------------------------------


async def test_a_removed_thread_leaves_the_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.index_command import refresh_index  # noqa: PLC0415 - the index is another module's work
    from core.index.search import KnowledgeIndex  # noqa: PLC0415

    rows = issues(3)
    rows[1].title = "aclnnMatmul fails with error 507015 on Atlas 800I A2"
    rows[1].body = "Serving Qwen with graph mode stops with 507015 after warmup."
    clock = FakeClock()
    async with FakeIssueHost("github", {ASCEND: rows}, clock) as gh:
        settings = settings_for(tmp_path, gh)  # REPOS_DIR has no clones: the index holds issues only
        await sync_issues(settings, [ASCEND], clock=clock)
        refresh_index(settings, None, say=lambda line: None)
        before = KnowledgeIndex.open_if_present(settings.index_path)
        assert before is not None
        assert [p.url for p in before.search("507015 aclnnMatmul", [ASCEND], k=3)][:1] == [f"https://github.com/{ASCEND}/issues/2"]

        drop(rows, 2)
        clock.now += 8 * DAY
        code = await run_issues_sync(settings, [ASCEND], clock=clock)  # removes it, then re-indexes ASCEND

    assert code == 0
    assert "1 removed (no longer listed)" in capsys.readouterr().out
    after = KnowledgeIndex.open_if_present(settings.index_path)
    assert after is not None
    assert all(p.url != f"https://github.com/{ASCEND}/issues/2" for p in after.search("507015 aclnnMatmul", [ASCEND], k=10))
    assert any(p.url == f"https://github.com/{ASCEND}/issues/1" for p in after.search("issue 1", [ASCEND], k=10))


def test_a_removal_alone_counts_as_a_change() -> None:
    outcome = RepoOutcome(ASCEND, removed=1)
    assert outcome.changed and outcome.line().endswith("1 removed (no longer listed)")
    assert not RepoOutcome(ASCEND).changed


# --- the store and the state --------------------------------------------------------------------------


def test_remove_issues_drops_every_version_and_rewrites_atomically(tmp_path: Path) -> None:
    append_issues(tmp_path, ASCEND, [thread(ASCEND, n, "2026-05-01T00:00:00Z") for n in (1, 2, 3)])
    append_issues(tmp_path, ASCEND, [thread(ASCEND, 2, "2026-05-02T00:00:00Z", title="newer")])
    path = issues_path(tmp_path, ASCEND)

    assert remove_issues(tmp_path, ASCEND, [2, 99]) == 1
    assert [i.number for i in read_issue_file(path).issues] == [1, 3]
    assert len(path.read_text(encoding="utf-8").splitlines()) == 2
    assert sorted(p.name for p in path.parent.iterdir()) == ["vllm-ascend.jsonl"]  # no temporary file left
    stamp = path.stat().st_mtime_ns
    assert remove_issues(tmp_path, ASCEND, [99]) == 0 and remove_issues(tmp_path, ASCEND, []) == 0
    assert path.stat().st_mtime_ns == stamp  # nothing to remove: not rewritten
    assert remove_issues(tmp_path, MINDIE, [1]) == 0  # no file at all


def test_state_files_from_before_full_listings_still_load(tmp_path: Path) -> None:
    folder = tmp_path / "issues"
    folder.mkdir()
    old = {"version": 1, "repos": {ASCEND: {"since": "2026-05-01T00:00:00Z", "synced_at": None,
                                            "pending": {"since": None, "next_page": 2, "newest": None, "pages": 1}}}}
    (folder / "state.json").write_text(json.dumps(old), encoding="utf-8")
    entry = SyncState.load(tmp_path).get(ASCEND)
    assert entry.full_listed_at is None and entry.pending is not None and not entry.pending.full

    old["repos"][ASCEND]["pending"]["full"] = "yes"
    (folder / "state.json").write_text(json.dumps(old), encoding="utf-8")
    with pytest.raises(StateError):
        SyncState.load(tmp_path)


def test_listed_numbers_survive_a_torn_last_line(tmp_path: Path) -> None:
    listed = ListedNumbers(tmp_path / "x.listed")
    listed.add([1, 2, 3])
    with listed.path.open("ab") as handle:
        handle.write(b"4")  # a crash mid-append: the cursor was not saved, so the page is read again
    again = ListedNumbers(listed.path)
    again.load()
    again.add([45, 3])
    reread = ListedNumbers(listed.path)
    reread.load()
    assert reread.numbers == {1, 2, 3, 4, 45}  # 45 was not glued onto the torn "4"

