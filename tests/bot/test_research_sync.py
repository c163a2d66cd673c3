"""`sync` against local bare repositories reached through file:// URLs (no network)."""
from __future__ import annotations

from pathlib import Path

from bot.sync import sync_repositories
from tests.fixtures.git_repos import VLLM_ASCEND_FILES, commit_files, git, make_bare_remote, make_repo

REPO = "vllm-project/vllm-ascend"


def remote(tmp_path: Path) -> tuple[Path, Path, str, str]:
    work = tmp_path / "upstream"
    first = make_repo(work, VLLM_ASCEND_FILES)
    bare = tmp_path / "remotes" / "vllm-ascend.git"
    url = make_bare_remote(work, bare)
    return work, bare, url, first


async def test_clone_then_update_shallow(make_settings, tmp_path: Path) -> None:
    work, bare, url, first = remote(tmp_path)
    settings = make_settings(repo_urls={REPO: url})
    lines: list[str] = []
    [result] = await sync_repositories(settings, [REPO], lines.append)
    clone = settings.repos_dir / "vllm-project" / "vllm-ascend"
    assert (result.repo, result.action, result.commit, result.path) == (REPO, "cloned", first, str(clone))
    assert (clone / "vllm_ascend" / "platform.py").exists()
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    assert lines[0] == f"Syncing {REPO}…" and "cloned" in lines[-1]
    assert not any(p.name.startswith(".vllm-ascend.partial") for p in clone.parent.iterdir())

    second = commit_files(work, {"vllm_ascend/new.py": "NEW = 1\n"})
    git(work, "push", "-q", str(bare), "main")
    [again] = await sync_repositories(settings, [REPO], None)
    assert (again.action, again.commit) == ("updated", second)
    assert (clone / "vllm_ascend" / "new.py").read_text() == "NEW = 1\n"


async def test_blobless_mode_keeps_history(make_settings, tmp_path: Path) -> None:
    work, bare, url, first = remote(tmp_path)
    second = commit_files(work, {"README.md": "changed\n"})
    git(work, "push", "-q", str(bare), "main")
    settings = make_settings(repo_urls={REPO: url}, repo_sync_mode="blobless")

    async def progress(line: str) -> None:  # async callbacks work too
        assert line

    [result] = await sync_repositories(settings, [REPO], progress)
    clone = settings.repos_dir / "vllm-project" / "vllm-ascend"
    assert result.action == "cloned" and result.commit == second
    assert git(clone, "rev-parse", "HEAD~1") == first  # full history, unlike a shallow clone


async def test_failures_are_reported_per_repository(make_settings, tmp_path: Path) -> None:
    _, _, url, _ = remote(tmp_path)
    settings = make_settings(
        repo_urls={
            REPO: url,
            "vllm-project/vllm": (tmp_path / "missing.git").as_uri(),
            "sgl-project/sglang": "https://user:hunter2-secret-token@127.0.0.1:9/sglang.git",
        }
    )
    not_git = settings.repos_dir / "verylucky01" / "MindIE-SD"
    not_git.mkdir(parents=True)
    (not_git / "file.txt").write_text("x")
    results = await sync_repositories(
        settings, [REPO, "vllm-project/vllm", "sgl-project/sglang", "verylucky01/MindIE-SD", "torvalds/linux"], None
    )
    by_repo = {r.repo: r for r in results}
    assert by_repo[REPO].ok
    assert by_repo["vllm-project/vllm"].action == "failed" and "git clone failed" in by_repo["vllm-project/vllm"].error
    assert by_repo["sgl-project/sglang"].action == "failed" and "hunter2" not in by_repo["sgl-project/sglang"].error
    assert "not a git clone" in by_repo["verylucky01/MindIE-SD"].error
    assert by_repo["torvalds/linux"].error == "not an allowlisted repository"
    assert not (settings.repos_dir / "vllm-project" / "vllm").exists()  # no half clone left behind
