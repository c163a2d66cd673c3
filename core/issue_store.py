"""Downloaded issues on disk: one JSON Lines file per repository under DATA_DIR/issues/.

Layout: DATA_DIR/issues/<owner>/<name>.jsonl, keyed by the canonical repository name
(core/research/repos.py), so MindIE-LLM's GitCode issues live under verylucky01/MindIE-LLM.jsonl
even though they come from Ascend/MindIE-LLM. One line holds one issue. The sync only ever
appends (a crash loses at most a partial last line, which readers skip), so an issue updated
twice appears twice; readers keep the newest version, and the sync compacts a file when
duplicates pile up.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

_SCHEMA = 2  # 2: pull requests, the thread's author, comment dates (1 reads as issues without them)


@dataclass(frozen=True)
class IssueComment:
    author: str
    association: str  # GitHub's author_association (OWNER/MEMBER/COLLABORATOR…); "" on GitCode
    body: str
    created_at: str = ""  # ISO 8601 when the host gave it; orders a reporter's "works now" after a fix


@dataclass(frozen=True)
class StoredIssue:
    repo: str  # canonical owner/name
    number: int
    url: str  # the issue's web page: what an answer cites
    title: str
    body: str
    labels: tuple[str, ...]
    state: str  # "open" or "closed"
    created_at: str  # ISO 8601, UTC, "…Z"
    updated_at: str
    closed_at: str | None
    comments: tuple[IssueComment, ...] = ()
    author: str = ""  # who opened the thread: their later "solved after …" is the reporter's word
    kind: str = "issue"  # "issue" or "pull" (a pull request: its body names the issues it fixes)
    merged: bool = False  # pull requests only

    @property
    def is_pull(self) -> bool:
        return self.kind == "pull"

    def to_json(self) -> dict[str, Any]:
        return {
            "v": _SCHEMA,
            "repo": self.repo,
            "number": self.number,
            "url": self.url,
            "title": self.title,
            "body": self.body,
            "labels": list(self.labels),
            "state": self.state,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "closed_at": self.closed_at,
            "comments": [
                {"author": c.author, "association": c.association, "body": c.body, "created_at": c.created_at} for c in self.comments
            ],
            "author": self.author,
            "kind": self.kind,
            "merged": self.merged,
        }

    @classmethod
    def from_json(cls, obj: Any) -> StoredIssue:
        """Raises ValueError/TypeError/KeyError on anything that is not a stored issue."""
        if not isinstance(obj, dict):
            raise TypeError("not an object")
        comments = obj.get("comments") or []
        if not isinstance(comments, list):
            raise TypeError("comments is not a list")
        labels = obj.get("labels") or []
        if not isinstance(labels, list):
            raise TypeError("labels is not a list")
        number = obj["number"]
        if isinstance(number, bool) or not isinstance(number, int):
            raise TypeError("number is not an integer")
        closed_at = obj.get("closed_at")
        kind = obj.get("kind", "issue")
        if kind not in ("issue", "pull"):
            raise ValueError("kind is neither issue nor pull")
        return cls(
            repo=_str(obj["repo"]),
            number=number,
            url=_str(obj["url"]),
            title=_str(obj.get("title", "")),
            body=_str(obj.get("body", "")),
            labels=tuple(_str(x) for x in labels),
            state=_str(obj["state"]),
            created_at=_str(obj["created_at"]),
            updated_at=_str(obj["updated_at"]),
            closed_at=None if closed_at is None else _str(closed_at),
            comments=tuple(
                IssueComment(_str(c["author"]), _str(c.get("association", "")), _str(c.get("body", "")), _str(c.get("created_at") or ""))
                for c in comments
            ),
            author=_str(obj.get("author") or ""),
            kind=kind,
            merged=obj.get("merged") is True,
        )


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, got {type(value).__name__}")
    return value


def parse_time(value: str) -> datetime:
    """An ISO 8601 timestamp as an aware UTC datetime (GitHub writes "Z", GitCode "+08:00")."""
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    moment = datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return moment.astimezone(timezone.utc)
    except OverflowError as exc:  # "0001-01-01T00:00:00+08:00" lies before year 1 in UTC
        raise ValueError(f"timestamp out of range: {value!r}") from exc


def utc_iso(value: str) -> str:
    """Normalise a timestamp to "YYYY-MM-DDTHH:MM:SSZ" so stored values compare as strings too."""
    return parse_time(value).strftime("%Y-%m-%dT%H:%M:%SZ")


def issues_dir(data_dir: Path) -> Path:
    return data_dir / "issues"


def issues_path(data_dir: Path, repo: str) -> Path:
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name or owner in {".", ".."} or name in {".", ".."}:
        raise ValueError(f"not an owner/name repository: {repo!r}")
    return issues_dir(data_dir) / owner / f"{name}.jsonl"


@dataclass(frozen=True)
class IssueFile:
    """What one file holds after dropping superseded versions and corrupt lines."""

    issues: tuple[StoredIssue, ...]  # ordered by issue number
    skipped_lines: int  # lines that were not a valid stored issue
    total_lines: int  # non-blank lines, including duplicates and corrupt ones


def read_issue_file(path: Path) -> IssueFile:
    """Newest version of each issue (by updated_at; on a tie the later line wins)."""
    if not path.exists():
        return IssueFile((), 0, 0)
    newest: dict[int, tuple[datetime, StoredIssue]] = {}
    skipped = total = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.strip():
                continue
            total += 1
            try:
                issue = StoredIssue.from_json(json.loads(raw))
                moment = parse_time(issue.updated_at)
            except (ValueError, TypeError, KeyError, UnicodeDecodeError):
                skipped += 1
                continue
            held = newest.get(issue.number)
            if held is None or moment >= held[0]:
                newest[issue.number] = (moment, issue)
    return IssueFile(tuple(newest[n][1] for n in sorted(newest)), skipped, total)


def stored_versions(path: Path) -> dict[int, str]:
    """Issue number -> newest stored updated_at, without keeping bodies in memory (the sync
    needs only this to tell new from updated from unchanged)."""
    versions: dict[int, tuple[datetime, str]] = {}
    if not path.exists():
        return {}
    with path.open("rb") as handle:
        for raw in handle:
            try:
                obj = json.loads(raw)
                number, updated = obj["number"], obj["updated_at"]
                if isinstance(number, bool) or not isinstance(number, int) or not isinstance(updated, str):
                    continue
                moment = parse_time(updated)
            except (ValueError, TypeError, KeyError, UnicodeDecodeError):
                continue
            held = versions.get(number)
            if held is None or moment >= held[0]:
                versions[number] = (moment, updated)
    return {n: v[1] for n, v in versions.items()}


def iter_issues(data_dir: Path, repo: str) -> Iterator[StoredIssue]:
    """The stored issues of one repository (empty when never synced); corrupt lines are
    skipped and counted in a warning, never raised."""
    result = read_issue_file(issues_path(data_dir, repo))
    if result.skipped_lines:
        log.warning("issues of %s: skipped %d corrupt line(s)", repo, result.skipped_lines)
    yield from result.issues


def newest_updated_at(issues: Iterable[StoredIssue]) -> str | None:
    best: tuple[datetime, str] | None = None
    for issue in issues:
        moment = parse_time(issue.updated_at)
        if best is None or moment > best[0]:
            best = (moment, issue.updated_at)
    return None if best is None else best[1]


def append_issues(data_dir: Path, repo: str, issues: Iterable[StoredIssue]) -> int:
    """Append issues and fsync before returning, so a cursor saved afterwards never points
    past data that could still be lost. Returns the number of lines written."""
    lines = [json.dumps(i.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n" for i in issues]
    if not lines:
        return 0
    path = issues_path(data_dir, repo)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab+") as handle:
        # A crash mid-write can leave a partial last line; start on a fresh line so the
        # new record is not glued onto the garbage (the garbage alone is then skipped).
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                handle.write(b"\n")
        handle.write("".join(lines).encode("utf-8", errors="replace"))  # a lone surrogate from an API becomes "?"
        handle.flush()
        os.fsync(handle.fileno())
    return len(lines)


def compact_issue_file(data_dir: Path, repo: str) -> IssueFile:
    """Rewrite the file with only the newest version of each issue (atomic replace)."""
    path = issues_path(data_dir, repo)
    current = read_issue_file(path)
    if not path.exists():
        return current
    _rewrite(path, current.issues)
    return IssueFile(current.issues, 0, len(current.issues))


def remove_issues(data_dir: Path, repo: str, numbers: Iterable[int]) -> int:
    """Drop these thread numbers from the file (every version of each), compacting it on the way;
    atomic like compact_issue_file. Returns how many stored threads were removed."""
    path = issues_path(data_dir, repo)
    gone = set(numbers)
    current = read_issue_file(path)
    kept = tuple(i for i in current.issues if i.number not in gone)
    if not gone or len(kept) == len(current.issues):
        return 0  # nothing to drop: leave the file (and its mtime) alone
    _rewrite(path, kept)
    return len(current.issues) - len(kept)


def _rewrite(path: Path, issues: Iterable[StoredIssue]) -> None:
    """Write to a temporary file, fsync, rename: a crash leaves the old file or the new one."""
    tmp = path.with_suffix(".jsonl.tmp")
    with tmp.open("wb") as handle:
        for issue in issues:
            handle.write((json.dumps(issue.to_json(), ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8", errors="replace"))
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
