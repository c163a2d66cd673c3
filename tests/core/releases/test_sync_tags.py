"""`sync` in shallow mode fetches the newest release tags at depth 1 (a file:// remote, no network)."""
from __future__ import annotations

from pathlib import Path

from bot.sync import sync_repositories
from core.releases.fetch import newest_release_tags
from tests.core.releases.conftest import REPO
from tests.fixtures.git_repos import commit_files, git


async def test_a_shallow_sync_holds_the_newest_release_tags_and_their_files(make_settings, release_repo: Path,
                                                                            release_remote: str) -> None:
    settings = make_settings(repo_urls={REPO: release_remote}, sync_release_tags=2)
    lines: list[str] = []
    [result] = await sync_repositories(settings, [REPO], lines.append)
    clone = settings.repos_dir / "vllm-project" / "vllm-ascend"
    assert result.ok and result.note == "2 release tag(s) fetched" and "2 release tag(s) fetched" in lines[-1]
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    assert sorted(git(clone, "tag", "--list").split()) == ["v0.10.0rc1", "v0.11.0"]  # not v0.9.1, not "nightly"
    assert "VLLM_ASCEND_LLMDD_RPC_PORT" in git(clone, "show", "v0.10.0rc1:vllm_ascend/envs.py")  # the tree came too

    commit_files(release_repo, {"README.md": "# vLLM Ascend 0.12\n"}, "next")
    git(release_repo, "tag", "v0.12.0rc1")
    git(release_repo, "push", "-q", "--tags", release_remote.removeprefix("file://"), "main")
    [again] = await sync_repositories(settings, [REPO], None)
    assert again.note == "1 release tag(s) fetched" and "v0.12.0rc1" in git(clone, "tag", "--list").split()
    [third] = await sync_repositories(settings, [REPO], None)
    assert third.ok and third.note == ""  # nothing new: nothing fetched


async def test_no_release_tags_when_turned_off(make_settings, release_remote: str) -> None:
    settings = make_settings(repo_urls={REPO: release_remote}, sync_release_tags=0)
    [result] = await sync_repositories(settings, [REPO], None)
    assert result.ok and git(settings.repos_dir / "vllm-project" / "vllm-ascend", "tag", "--list") == ""


def test_newest_release_tags_from_ls_remote() -> None:
    listing = "\n".join(f"{i:040x}\trefs/tags/{t}" for i, t in enumerate(
        ["v0.9.1", "v0.9.1^{}", "v0.10.0rc1", "v0.11.0", "nightly", "--upload-pack=x", "v0.7.3.post1"]))
    assert newest_release_tags(listing, 2) == ["v0.10.0rc1", "v0.11.0"]
    assert newest_release_tags(listing, 10) == ["v0.7.3.post1", "v0.9.1", "v0.10.0rc1", "v0.11.0"]
    assert newest_release_tags(listing, 0) == []
