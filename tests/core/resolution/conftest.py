"""Small hand-written threads for the resolution tests (never snapshot text)."""
from __future__ import annotations

from core.issue_store import IssueComment, StoredIssue

REPO = "vllm-project/vllm-ascend"


def thread(number: int, body: str, *comments: tuple[str, str, str], title: str = "", state: str = "closed",
           kind: str = "issue", merged: bool = False, author: str = "alice") -> StoredIssue:
    """comments: (author, association, body)."""
    return StoredIssue(
        repo=REPO, number=number, url=f"https://github.com/{REPO}/{'pull' if kind == 'pull' else 'issues'}/{number}",
        title=title or f"thread {number}", body=body, labels=(), state=state, created_at="2026-01-01T00:00:00Z",
        updated_at="2026-01-02T00:00:00Z", closed_at=None,
        comments=tuple(IssueComment(a, r, b, f"2026-01-01T0{i}:00:00Z") for i, (a, r, b) in enumerate(comments)),
        author=author, kind=kind, merged=merged,
    )
