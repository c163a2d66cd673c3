"""Citation validity: links in answers checked against a fixture clone built by the test."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.eval.citations import CitationChecker, SyncedIssues, line_count
from bot.eval.links import RepoBases
from core.issue_store import StoredIssue, append_issues
from tests.fixtures.git_repos import commit_files, make_repo

GH = "https://github.com/vllm-project/vllm-ascend"
GITCODE_LLM = "https://gitcode.com/Ascend/MindIE-LLM"


@pytest.fixture
def clones(tmp_path: Path) -> tuple[Path, str, str]:
    repos = tmp_path / "repos"
    first = make_repo(repos / "vllm-project" / "vllm-ascend", {"docs/faq.md": "one\ntwo\nthree\n", "README.md": "x"})
    second = commit_files(repos / "vllm-project" / "vllm-ascend", {"docs/new.md": "a\nb\n"})
    make_repo(repos / "verylucky01" / "MindIE-LLM", {"docs/zh/faq.md": "一\n二\n"})
    return repos, first, second


def checker(repos: Path, data_dir: Path | None = None) -> CitationChecker:
    return CitationChecker(repos, RepoBases(), SyncedIssues(data_dir))


def test_permalinks_resolve_only_when_file_and_lines_exist_at_that_commit(clones):
    repos, first, second = clones
    with checker(repos) as check:
        ok = check.check(f"{GH}/blob/{first}/docs/faq.md#L2-L3")
        assert ok.status == "valid", ok
        assert check.check(f"{GH}/blob/{first[:10]}/docs/faq.md?plain=1#L1").status == "valid"  # short sha, docs form
        wrong_commit = check.check(f"{GH}/blob/{'0' * 40}/docs/faq.md#L1")
        assert wrong_commit.status == "failed" and "not in the local clone" in wrong_commit.reason
        not_yet = check.check(f"{GH}/blob/{first}/docs/new.md")  # added by the second commit
        assert not_yet.status == "failed" and "does not exist" in not_yet.reason
        assert check.check(f"{GH}/blob/{second}/docs/new.md#L2").status == "valid"
        past_end = check.check(f"{GH}/blob/{first}/docs/faq.md#L3-L4")
        assert past_end.status == "failed" and "3 lines" in past_end.reason
        assert check.check(f"{GH}/blob/{first}/docs/faq.md#L0").status == "failed"
        assert check.check(f"{GH}/blob/main/docs/faq.md#L3").status == "valid"  # a branch the clone has
        assert check.check(f"{GH}/blob/no-such-branch/docs/faq.md").status == "unchecked"
        assert check.check(f"{GH}/blob/{first}/../../etc/passwd").status == "failed"
        assert check.check(f"{GITCODE_LLM}/blob/main/docs/zh/faq.md#L1-L2").status == "valid"  # GitCode original


def test_links_outside_the_allowlist_or_without_a_clone_are_unchecked_not_failed(clones):
    repos, first, _ = clones
    with checker(repos) as check:
        for url, why in (
            (f"https://evil.example.com/vllm-project/vllm-ascend/blob/{first}/docs/faq.md#L1", "not a repository link"),
            (f"https://github.com/someone/vllm-ascend/blob/{first}/docs/faq.md#L1", "not a permalink or issue"),
            ("https://github.com/vllm-project/vllm/blob/main/README.md", "no local clone"),
            ("https://docs.vllm.ai/projects/ascend/en/latest/faqs.html", "not a repository link"),
            ("https://github.com/pytorch/pytorch/issues/1", "outside the allowlist"),
        ):
            verdict = check.check(url)
            assert verdict.status == "unchecked" and why in verdict.reason, verdict


def test_issue_links_need_the_right_tracker_and_exist_where_synced(tmp_path: Path, clones):
    repos, _, _ = clones
    data_dir = tmp_path / "data"
    issue = StoredIssue("vllm-project/vllm-ascend", 40, f"{GH}/issues/40", "t", "b", (), "open",
                        "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", None)
    append_issues(data_dir, "vllm-project/vllm-ascend", [issue, StoredIssue(**{**issue.__dict__, "number": 7})])
    with checker(repos, data_dir) as check:
        assert check.check(f"{GH}/issues/40").status == "valid"
        missing = check.check(f"{GH}/issues/12")
        assert missing.status == "failed" and "synced" in missing.reason
        assert check.check(f"{GH}/issues/4000").status == "unchecked"  # newer than the sync
        assert check.check(f"{GH}/pull/12").status == "valid"  # pull requests: shape only
        not_synced = check.check(f"{GITCODE_LLM}/issues/5")
        assert not_synced.status == "valid" and "shape only" in not_synced.reason
        wrong_host = check.check("https://github.com/verylucky01/MindIE-LLM/issues/5")
        assert wrong_host.status == "failed" and "gitcode.com/Ascend/MindIE-LLM" in wrong_host.reason
        assert check.check(f"{GH}/issues/0").status == "unchecked"  # not an issue number


def test_line_count():
    assert line_count(b"") == 0 and line_count(b"a") == 1 and line_count(b"a\n") == 1 and line_count(b"a\nb") == 2
