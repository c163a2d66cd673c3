"""What a search of the knowledge index returns, and the narrow interface its users depend on."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

PassageKind = Literal["doc", "code", "issue", "config"]


@dataclass(frozen=True)
class Passage:
    """One quotable unit (a heading section, an FAQ entry, a function, a config file, an issue).

    `url` is a permalink at the indexed commit that opens at the lines (or the issue URL);
    `score` is comparable only within one search.
    """

    repo: str  # canonical owner/name
    path: str  # path in the repository; "issues/<number>" for an issue
    title: str  # heading path, function name or issue title
    url: str
    kind: PassageKind
    start_line: int
    end_line: int
    score: float
    text: str
    release: str = ""  # the release tag it was read at (core/releases); "" for the indexed branch

    def to_dict(self) -> dict[str, object]:
        return {
            "repo": self.repo,
            "path": self.path,
            "title": self.title,
            "url": self.url,
            "kind": self.kind,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "score": round(self.score, 4),
            "text": self.text,
            **({"release": self.release} if self.release else {}),
        }


class Retriever(Protocol):
    """Passages that answer `query`, best first, only those above the index's relevance threshold.

    `repos` restricts the search (empty: every indexed repository); the implementation falls back
    to all repositories when the restricted search finds nothing good.
    """

    def search(self, query: str, repos: Sequence[str] = (), k: int = 5, kind: PassageKind | None = None) -> list[Passage]: ...
