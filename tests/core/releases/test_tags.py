"""Which release tag a user's version reads at."""
from __future__ import annotations

from pathlib import Path

from core.releases.tags import nearest_release, normalized, release_tags

TAGS = ("v0.9.0", "v0.9.1rc1", "v0.9.1", "v0.10.0rc1", "v0.11.0")


def test_the_users_own_tag_when_it_exists() -> None:
    assert nearest_release(TAGS, "0.9.1") == "v0.9.1"
    assert nearest_release(TAGS, "v0.10.0rc1") == "v0.10.0rc1"


def test_the_nearest_release_at_or_below_otherwise() -> None:
    assert nearest_release(TAGS, "0.9.2") == "v0.9.1"  # a patch without a tag
    assert nearest_release(TAGS, "0.10.0") == "v0.10.0rc1"  # the final is not tagged yet
    assert nearest_release(TAGS, "0.9.2.dev45+gabc1234") == "v0.9.1"  # a dev build reads at the release below it


def test_no_tag_above_every_release_or_below_the_first_or_for_garbage() -> None:
    assert nearest_release(TAGS, "9.9.9") is None  # newer than the clone, or not a release at all
    assert nearest_release(TAGS, "0.8.0") is None
    assert nearest_release(TAGS, "main") is None
    assert nearest_release((), "0.9.1") is None


def test_versions_compare_with_or_without_v() -> None:
    assert normalized("v0.9.1") == normalized("0.9.1") == "0.9.1"


def test_a_clone_lists_only_release_tags_oldest_first(repos_dir: Path) -> None:
    assert release_tags(repos_dir / "vllm-project" / "vllm-ascend") == ("v0.9.1", "v0.10.0rc1", "v0.11.0")
    assert release_tags(repos_dir / "missing") == ()
