"""Reading at a release keeps one ranking: a resolved thread that matches better than the release's
docs is not pushed out of the few passages an answer quotes."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.index.passage import Passage
from core.releases.index import ReleaseAwareRetriever
from core.releases.pinning import reading_at
from core.releases.tags import ReleaseChoice

REPO = "vllm-project/vllm-ascend"


def passage(path: str, kind: str, score: float) -> Passage:
    return Passage(REPO, path, path, f"https://example.invalid/{path}", kind, 1, 2, score, "text")  # type: ignore[arg-type]


class Fixed:
    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: Any = None) -> list[Passage]:
        return [p for p in self.passages if kind is None or p.kind == kind][:k]


class Releases:
    def __init__(self, index: Fixed) -> None:
        self.index = index

    def index_for(self, repo: str, tag: str, commit: str) -> Fixed:
        return self.index


def test_a_better_thread_keeps_its_place_beside_the_release_docs() -> None:
    main = Fixed([passage("issues/7", "issue", 9.0), passage("docs/main.md", "doc", 8.0)])
    tagged = Fixed([passage(f"docs/old{i}.md", "doc", 5.0 - i) for i in range(3)])
    retriever = ReleaseAwareRetriever(main, Releases(tagged))  # type: ignore[arg-type]
    with reading_at({REPO: ReleaseChoice(REPO, "0.9.1", "v0.9.1", "0" * 40)}):
        found = retriever.search("q", [REPO], k=3)
    assert [p.path for p in found] == ["issues/7", "docs/old0.md", "docs/old1.md"]  # main's doc replaced by the release's
    assert found[1].release == "v0.9.1" and found[0].release in (None, "")
