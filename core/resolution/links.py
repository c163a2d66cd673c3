"""References between threads: the issues a pull request fixes, a duplicate's original, a PR a
maintainer names as the fix.

GitHub closes an issue from a PR that says "Fixes #N" (fix/fixes/fixed, close/closes/closed,
resolve/resolves/resolved, also with a full issue URL); Chinese descriptions write "修复 #N".
Numbers only count inside the thread's own repository: a URL to another repository is not ours.
"""
from __future__ import annotations

import re

_KEYWORD_REF = re.compile(
    r"(?i)(?:fix(?:e[sd])?|close[sd]?|resolve[sd]?|修复|解决|关闭)\s{0,3}[:：]?\s{0,3}"
    r"(?:(?:https?://[A-Za-z0-9.\-]{1,80}/([A-Za-z0-9_.\-]{1,100}/[A-Za-z0-9_.\-]{1,100})/issues/)|#)(\d{1,7})(?!\d)"
)
_DUPLICATE = re.compile(
    r"(?i)(?:duplicate(?:d)?\s{0,3}(?:of|with|to)?|dup(?:licate)?\s{0,2}of|same (?:issue|problem) as|tracked (?:in|by|at)|"
    r"see|refer to|重复|同\s{0,2}issue|参考|跟踪)\s{0,3}[:：]?\s{0,3}(?:issue\s{0,2})?#(\d{1,7})(?!\d)"
)
_FIXED_BY = re.compile(
    r"(?i)(?:fixed|solved|resolved|addressed|handled|supported|landed|merged|修复|解决)\s{0,3}(?:by|in|with|via|through|at|于|在)?\s{0,3}"
    r"(?:pr|pull request|the pr|this pr|patch)?\s{0,3}#(\d{1,7})(?!\d)"
    r"|(?i:pr|pull request)\s{0,2}#(\d{1,7})(?!\d)\s{0,3}(?:fix|solve|resolve|address|support)"
    r"|#(\d{1,7})(?!\d)\s{0,3}(?i:fix|solve|resolve|should fix|will fix|has fixed|修复)"
)
_ANY_REF = re.compile(r"(?<![\w/&])#(\d{1,7})(?!\d)")
# "see PR: https://github.com/o/n/pull/4495": the number is a fact about this repository; the link
# itself is never kept (an answer builds its own from the number).
_PULL_URL = re.compile(r"(?i)https?://[A-Za-z0-9.\-]{1,80}/([A-Za-z0-9_.\-]{1,100}/[A-Za-z0-9_.\-]{1,100})/pulls?/(\d{1,7})(?!\d)")


def fixes(text: str, repo: str) -> tuple[int, ...]:
    """Issue numbers a pull request says it fixes (closing keywords), in order, without repeats."""
    found: list[int] = []
    for match in _KEYWORD_REF.finditer(text[:20_000]):
        other = match.group(1)
        if other and other.lower() != repo.lower():
            continue
        number = int(match.group(2))
        if number not in found:
            found.append(number)
    return tuple(found)


def duplicate_of(text: str) -> int | None:
    match = _DUPLICATE.search(text[:5000])
    return int(match.group(1)) if match else None


def fixed_by(text: str, repo: str = "") -> tuple[int, ...]:
    """Numbers a comment names as the fix ("fixed by #123", "PR #123 fixes this", "#123 should fix",
    a link to a pull request of this repository)."""
    found: list[int] = []
    for match in _FIXED_BY.finditer(text[:5000]):
        number = int(next(g for g in match.groups() if g))
        if number not in found:
            found.append(number)
    for match in _PULL_URL.finditer(text[:5000]):
        if repo and match.group(1).lower() == repo.lower() and int(match.group(2)) not in found:
            found.append(int(match.group(2)))
    return tuple(found)


def mentioned(text: str) -> tuple[int, ...]:
    found: list[int] = []
    for match in _ANY_REF.finditer(text[:5000]):
        number = int(match.group(1))
        if number not in found:
            found.append(number)
    return tuple(found)
