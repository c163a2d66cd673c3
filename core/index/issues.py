"""Downloaded issues as index units: one unit per issue, its URL as the permalink.

Reads what `python -m bot sync --issues` stored (core/issue_store.py). The unit text is the title,
labels, state, body and the maintainers' comments (a closing answer is what a user wants quoted).
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.issue_store import StoredIssue, iter_issues

MAX_BODY_CHARS = 3000
MAX_COMMENT_CHARS = 1500
_MAINTAINERS = {"OWNER", "MEMBER", "COLLABORATOR"}


@dataclass(frozen=True)
class IssueUnit:
    number: int
    title: str
    url: str
    text: str
    version: str  # changes when the stored issue changes (the cache key)


def issue_text(issue: StoredIssue) -> str:
    lines = [f"#{issue.number} {issue.title}", f"state: {issue.state}"]
    if issue.labels:
        lines.append("labels: " + ", ".join(issue.labels))
    lines += ["", issue.body.strip()[:MAX_BODY_CHARS]]
    # GitCode gives no association: there the last comment of a closed issue stands for the answer
    answers = [c for c in issue.comments if c.association.upper() in _MAINTAINERS]
    if not answers and issue.state == "closed" and issue.comments:
        answers = [issue.comments[-1]]
    for comment in answers[-3:]:
        lines += ["", f"{comment.author or 'maintainer'}:", comment.body.strip()[:MAX_COMMENT_CHARS]]
    return "\n".join(lines).strip()


def issue_units(data_dir: Path, repo: str) -> Iterator[IssueUnit]:
    try:
        issues = list(iter_issues(data_dir, repo))
    except (OSError, ValueError):
        return
    for issue in issues:
        yield IssueUnit(issue.number, f"#{issue.number} {issue.title}", issue.url, issue_text(issue),
                        f"{issue.updated_at}|{len(issue.comments)}")
