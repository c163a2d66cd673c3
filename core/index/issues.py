"""Downloaded threads as index units: one unit per issue or pull request, its URL as the permalink.

Reads what `python -m bot sync --issues` (or `bot import`) stored (core/issue_store.py). The unit
text is the title, labels, state, the report and the comments, each comment headed by its
author's role ("maintainer @x:", "reporter @y:", "user @z:") so a quote and the research prompt
can say who wrote it. A report that is mostly a pasted log contributes the reporter's words and
its decisive error lines, not the whole paste, which would match every question about any log.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from core.issue_store import StoredIssue, iter_issues
from core.resolution.extract import maintainers_of, role_of
from core.resolution.focus import focus

MAX_BODY_CHARS = 3000
MAX_COMMENT_CHARS = 1500
MAX_COMMENTS = 4


@dataclass(frozen=True)
class IssueUnit:
    number: int
    title: str
    url: str
    text: str
    version: str  # changes when the stored issue changes (the cache key)
    path: str = ""  # "issues/N" or "pulls/N"


# A line of thread text that looks like one of our role headings ("maintainer @x:") would let a
# reporter pass for a maintainer; such lines are quoted so only the builder's headings start a line.
_ROLE_LINE = re.compile(r"^(\s{0,8})((?:maintainer|reporter|user)\s{0,4}@)", re.IGNORECASE | re.MULTILINE)


def _report(body: str) -> str:
    seen = focus(body)
    text = seen.query() if seen.is_paste else body
    return _ROLE_LINE.sub(r"\1(quoted) \2", text)


def issue_text(issue: StoredIssue, maintainers: frozenset[str] = frozenset()) -> str:
    head = f"#{issue.number} {issue.title}"
    state = issue.state + (" (pull request, merged)" if issue.is_pull and issue.merged else " (pull request)" if issue.is_pull else "")
    lines = [head, f"state: {state}"]
    if issue.labels:
        lines.append("labels: " + ", ".join(issue.labels))
    lines += ["", _report(issue.body.strip())[:MAX_BODY_CHARS]]
    roles = [(c, role_of(c, issue, maintainers)) for c in issue.comments if c.body.strip()]
    # The maintainers' words first in the budget, then the reporter's: that is where answers are.
    kept = [cr for cr in roles if cr[1] == "maintainer"][-MAX_COMMENTS:]
    kept += [cr for cr in roles if cr[1] == "reporter"][-max(1, MAX_COMMENTS - len(kept)):]
    if not kept and issue.state == "closed" and roles:
        kept = [roles[-1]]
    for comment, role in sorted(kept, key=lambda cr: roles.index(cr)):
        lines += ["", f"{role} @{comment.author or '?'}:", _report(comment.body.strip())[:MAX_COMMENT_CHARS]]
    return "\n".join(lines).strip()


def issue_units(data_dir: Path, repo: str, configured_maintainers: tuple[str, ...] = ()) -> Iterator[IssueUnit]:
    try:
        issues = list(iter_issues(data_dir, repo))
    except (OSError, ValueError):
        return
    maintainers = maintainers_of(issues, configured_maintainers)
    for issue in issues:
        yield IssueUnit(issue.number, f"#{issue.number} {issue.title}", issue.url, issue_text(issue, maintainers),
                        f"{issue.updated_at}|{len(issue.comments)}|{issue.kind}|{len(maintainers)}",
                        f"{'pulls' if issue.is_pull else 'issues'}/{issue.number}")
