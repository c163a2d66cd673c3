"""A per-tag index built on first use, units shared by blob, read through the pinned retriever."""
from __future__ import annotations

from pathlib import Path

from core.index.builder import RepoSource, build_index
from core.index.search import KnowledgeIndex
from core.releases.index import ReleaseAwareRetriever, ReleaseIndexes
from core.releases.pinning import ReleasePinner, reading_at
from core.releases.tags import ReleaseChoice, tag_commit
from tests.core.releases.conftest import REPO

BASE = "https://github.com/vllm-project/vllm-ascend"


def _setup(repos_dir: Path, tmp_path: Path, kept: int = 8) -> tuple[KnowledgeIndex, ReleaseIndexes, Path]:
    clone = repos_dir / "vllm-project" / "vllm-ascend"
    index_dir = tmp_path / "index"
    build_index(index_dir, [RepoSource(REPO, clone, BASE)], facts=())
    releases = ReleaseIndexes(index_dir, ReleasePinner(repos_dir), lambda _repo, _clone: BASE, kept=kept)
    return KnowledgeIndex(index_dir), releases, clone


def test_passages_come_from_the_users_release_marked_and_linked_at_its_commit(repos_dir: Path, tmp_path: Path) -> None:
    main, releases, clone = _setup(repos_dir, tmp_path)
    retriever = ReleaseAwareRetriever(main, releases)
    question = "how do I turn on graph mode"
    [at_main, *_] = retriever.search(question, [REPO], 3)
    assert "on by default" in at_main.text and at_main.release == ""  # no pins: main, as before
    commit = tag_commit(clone, "v0.9.1")
    with reading_at({REPO: ReleaseChoice(REPO, "0.9.1", "v0.9.1", commit)}):
        found = retriever.search(question, [REPO], 3)
    # the FAQ as it read at v0.9.1 (knowledge-base facts, the same at every release, may rank beside it)
    at_tag = next(p for p in found if p.path == "docs/source/faqs.md")
    assert "off by default in this release" in at_tag.text and at_tag.release == "v0.9.1"
    assert at_tag.url.startswith(f"{BASE}/blob/{commit}/docs/source/faqs.md")
    assert retriever.search(question, [REPO], 3)[0].release == ""  # the pin ended with its answer


def test_units_are_shared_by_blob_across_tags_and_main(repos_dir: Path, tmp_path: Path) -> None:
    _, releases, clone = _setup(repos_dir, tmp_path)
    first = releases.build(REPO, "v0.9.1", tag_commit(clone, "v0.9.1"))
    # README.md is the same blob as on main: shared; envs.py, the config and the FAQ differ from main
    assert (first.files, first.chunked) == (4, 3)
    second = releases.build(REPO, "v0.10.0rc1", tag_commit(clone, "v0.10.0rc1"))
    # its envs.py is main's blob, its FAQ and config are v0.9.1's: nothing to chunk
    assert (second.files, second.chunked) == (4, 0)
    again = releases.build(REPO, "v0.9.1", tag_commit(clone, "v0.9.1"))
    assert again.chunked == 0


def test_least_recently_used_tag_indexes_go_beyond_the_limit(repos_dir: Path, tmp_path: Path) -> None:
    _, releases, clone = _setup(repos_dir, tmp_path, kept=2)
    for tag in ("v0.9.1", "v0.10.0rc1", "v0.11.0"):
        assert releases.index_for(REPO, tag, tag_commit(clone, tag)) is not None
    kept = sorted(p.name for p in (tmp_path / "index" / "releases" / "vllm-project+vllm-ascend").iterdir() if p.is_dir())
    assert kept == ["v0.10.0rc1", "v0.11.0"]


def test_a_tag_the_clone_cannot_read_falls_back_to_main(repos_dir: Path, tmp_path: Path) -> None:
    main, releases, _ = _setup(repos_dir, tmp_path)
    retriever = ReleaseAwareRetriever(main, releases)
    with reading_at({REPO: ReleaseChoice(REPO, "0.9.1", "v0.9.1", "0" * 40)}):
        [passage, *_] = retriever.search("how do I turn on graph mode", [REPO], 3)
    assert passage.release == "" and "on by default" in passage.text


def test_a_server_builds_a_new_tag_in_the_background_and_answers_from_main_meanwhile(repos_dir: Path, tmp_path: Path) -> None:
    import threading
    import time

    _, _, clone = _setup(repos_dir, tmp_path)
    releases = ReleaseIndexes(tmp_path / "index", ReleasePinner(repos_dir), lambda _repo, _clone: BASE, background=True)
    commit = tag_commit(clone, "v0.9.1")
    assert releases.index_for(REPO, "v0.9.1", commit) is None  # not built yet: this answer reads main
    deadline = time.monotonic() + 60
    while any(t.name == "release-index-v0.9.1" for t in threading.enumerate()) and time.monotonic() < deadline:
        time.sleep(0.05)
    index = releases.index_for(REPO, "v0.9.1", commit)
    assert index is not None
    assert any("off by default in this release" in p.text for p in index.search("how do I turn on graph mode", [REPO], 3))
