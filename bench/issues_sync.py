"""Issue download and store costs, measured on synthetic data (no network).

1. The store: append N synthetic issues in pages of 100 (each page fsynced, as the sync does),
   then read them back: `stored_versions` (what the sync loads at start), `read_issue_file`
   (what the index loads), and a compaction of a file where a third of the issues appear twice.
2. The sync itself against the loopback GitHub fake: pages per second and the client's own
   overhead per page (real HTTP, real JSON, real fsync; the clock is fake so nothing sleeps).

    .venv/bin/python bench/issues_sync.py [--issues 20000] [--body 3000] [--sync-issues 3000]
"""
from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from bot.issues.sync import sync_issues  # noqa: E402
from bot.settings import Settings  # noqa: E402
from core.issue_store import (  # noqa: E402
    IssueComment,
    StoredIssue,
    append_issues,
    compact_issue_file,
    issues_path,
    read_issue_file,
    stored_versions,
)
from tests.support.fake_issue_host import FakeClock, FakeIssueHost, HostedIssue  # noqa: E402

REPO = "vllm-project/vllm-ascend"


def synthetic(number: int, body_chars: int, minute: int) -> StoredIssue:
    body = ("NPU out of memory while loading the model with tp=8 on 910B; env output follows. " * (body_chars // 80 + 1))[:body_chars]
    closed = number % 3 == 0
    return StoredIssue(
        repo=REPO,
        number=number,
        url=f"https://github.com/{REPO}/issues/{number}",
        title=f"[Bug]: issue {number} with HCCL timeout",
        body=body,
        labels=("bug", "module:core"),
        state="closed" if closed else "open",
        created_at="2026-01-01T00:00:00Z",
        updated_at=f"2026-03-{1 + minute // 1440:02d}T{(minute // 60) % 24:02d}:{minute % 60:02d}:00Z",
        closed_at="2026-03-02T00:00:00Z" if closed else None,
        comments=(IssueComment("maintainer", "MEMBER", "Fixed by upgrading CANN; see the FAQ."),) if closed else (),
    )


def peak_mb(fn, *args):  # type: ignore[no-untyped-def]
    """Peak Python heap allocated while fn runs (tracemalloc; timed separately, it slows things)."""
    tracemalloc.start()
    try:
        fn(*args)
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def bench_store(count: int, body: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        issues = [synthetic(n, body, n % 40000) for n in range(1, count + 1)]
        started = time.perf_counter()
        for i in range(0, count, 100):
            append_issues(data, REPO, issues[i : i + 100])
        write_s = time.perf_counter() - started
        path = issues_path(data, REPO)
        size_mb = path.stat().st_size / 1e6
        del issues

        started = time.perf_counter()
        versions = stored_versions(path)
        versions_s = time.perf_counter() - started
        started = time.perf_counter()
        loaded = read_issue_file(path)
        read_s = time.perf_counter() - started
        assert len(versions) == count and len(loaded.issues) == count

        append_issues(data, REPO, [synthetic(n, body, 50000) for n in range(1, count // 3 + 1)])
        started = time.perf_counter()
        compacted = compact_issue_file(data, REPO)
        compact_s = time.perf_counter() - started
        assert len(compacted.issues) == count

        print(f"store: {count} issues, body {body} chars, file {size_mb:.1f} MB")
        print(f"  append in fsynced pages of 100: {write_s:.2f} s ({count / write_s:,.0f} issues/s)")
        print(f"  stored_versions (sync start):    {versions_s:.2f} s, peak heap {peak_mb(stored_versions, path):.0f} MB")
        print(f"  read_issue_file (index load):    {read_s:.2f} s, peak heap {peak_mb(read_issue_file, path):.0f} MB")
        print(f"  compact with {count // 3} duplicates:   {compact_s:.2f} s")


async def bench_sync(count: int) -> None:
    clock = FakeClock()
    rows = [HostedIssue(number=n, title=f"issue {n}", updated_at=f"2026-04-01T{(n // 60) % 24:02d}:{n % 60:02d}:00Z", body="x" * 2000) for n in range(1, count + 1)]
    with tempfile.TemporaryDirectory() as tmp:
        async with FakeIssueHost("github", {REPO: rows}, clock) as gh:
            settings = Settings(_env_file=None, data_dir=Path(tmp), github_api_url=gh.api_url, github_token=None, repos_dir=Path(tmp) / "none")  # type: ignore[call-arg]
            started = time.perf_counter()
            out = await sync_issues(settings, [REPO], clock=clock)
            seconds = time.perf_counter() - started
            again = time.perf_counter()
            second = await sync_issues(settings, [REPO], clock=clock)
            incremental = time.perf_counter() - again
    assert out[0].ok and out[0].new == count, out[0].line()
    print(f"sync against the loopback GitHub fake: {count} issues, {out[0].pages} pages of 100")
    print(f"  first run:  {seconds:.2f} s, {out[0].pages / seconds:.1f} pages/s ({seconds / out[0].pages * 1000:.0f} ms per page incl. the fake server)")
    print(f"  second run (nothing changed, since= the newest): {incremental:.2f} s, {second[0].pages} page(s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--issues", type=int, default=20000)
    parser.add_argument("--body", type=int, default=3000)
    parser.add_argument("--sync-issues", type=int, default=3000)
    args = parser.parse_args()
    bench_store(args.issues, args.body)
    asyncio.run(bench_sync(args.sync_issues))


if __name__ == "__main__":
    main()
