"""Issue → fixing PR → the first release tag that contains it, from a small fixture clone."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from core.resolution.memory import RepoInput, ResolutionMemory, build_memory
from core.resolution.releases import release_map, version_key
from core.issue_store import append_issues

from tests.core.resolution.conftest import REPO, thread


def git(clone: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(clone), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x",
                        "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(clone)})


@pytest.fixture()
def clone(tmp_path: Path) -> Path:
    repo = tmp_path / "clone"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for subject, tag in [("init (#1)", "v0.9.0"), ("[Bugfix] pin numpy (#11)", None), ("docs (#12)", "v0.9.1rc1"),
                         ("feature (#13)", None), ("release", "v0.9.1")]:
        git(repo, "commit", "-q", "--allow-empty", "-m", subject)
        if tag:
            git(repo, "tag", tag)
    git(repo, "tag", "not-a-release")
    return repo


def test_version_order_of_release_tags() -> None:
    tags = ["v0.9.1", "v0.9.1rc1", "v0.10.0rc1", "v0.9.1.post1", "v0.7.3", "nightly"]
    assert sorted((t for t in tags if version_key(t)), key=lambda t: version_key(t) or ()) == [
        "v0.7.3", "v0.9.1rc1", "v0.9.1", "v0.9.1.post1", "v0.10.0rc1"]


def test_a_pr_is_first_released_in_the_lowest_tag_that_contains_it(clone: Path) -> None:
    found = release_map(clone)
    assert found.release_of(1) == "v0.9.0" and found.release_of(11) == "v0.9.1rc1" and found.release_of(13) == "v0.9.1"
    assert found.release_of(99) == ""  # never merged here


def test_memory_says_fixed_in_which_release_by_which_pr(clone: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    append_issues(data, REPO, [
        thread(10, "AttributeError: module 'numpy' has no attribute 'float'", ("alice", "NONE", "any news?")),
        thread(11, "Fixes #10", kind="pull", merged=True, title="[Bugfix] pin numpy"),
    ])
    report = build_memory(tmp_path / "index", data, [RepoInput(REPO, clone)])
    assert (report.threads, report.resolved, report.with_release) == (2, 2, 2)
    memory = ResolutionMemory.from_file(tmp_path / "index" / "resolutions.json")
    issue = memory.get(REPO, 10)
    assert issue is not None and issue.fixed_by == (11,) and issue.release == "v0.9.1rc1"
    assert [r.number for r in memory.with_signature("AttributeError: module 'numpy' has no attribute 'float'")] == [10]


def test_no_clone_means_no_release_names_not_a_failure(tmp_path: Path) -> None:
    data = tmp_path / "data"
    append_issues(data, REPO, [thread(11, "Fixes #10", kind="pull", merged=True)])
    report = build_memory(tmp_path / "index", data, [RepoInput(REPO, tmp_path / "missing")])
    assert (report.threads, report.with_release) == (1, 0)


def test_a_damaged_or_foreign_memory_file_costs_the_memory_not_the_worker(tmp_path: Path) -> None:
    from core.resolution.memory import MemoryFile

    index = tmp_path / "index"
    index.mkdir()
    (index / "resolutions.json").write_text('{"v": 1, "records": [{"repo": "x"', encoding="utf-8")  # cut mid-write
    assert len(MemoryFile(index, check_every=0).current()) == 0
    (index / "resolutions.json").write_text('{"v": 99, "records": []}', encoding="utf-8")  # another version's file
    assert len(MemoryFile(index, check_every=0).current()) == 0
    (index / "resolutions.json").write_text(
        '{"v": 1, "records": [{"repo": "o/n", "number": 1, "url": "https://github.com/o/n/issues/1"}, {"number": "x"}, 7]}',
        encoding="utf-8")
    assert len(MemoryFile(index, check_every=0).current()) == 1  # the bad records are skipped, the good one kept
