"""Does each link in an answer resolve? Permalinks against the local clones, issue links by shape
(and against the synced issues where there are some); everything else is "unchecked", not failed.

Git objects are read through one `git cat-file --batch` process per clone: a run checks hundreds of
links and a process per link would dominate the eval's time.
"""
from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from bot.eval.links import BlobLink, IssueLink, RepoBases, looks_like_code_host_link, parse_blob, parse_issue
from core.issue_store import issues_path, iter_issues

Status = Literal["valid", "failed", "unchecked"]
_MAX_REF_SEGMENTS = 4  # branch names such as releases/v0.13.0 hold '/'


@dataclass(frozen=True)
class LinkVerdict:
    url: str
    status: Status
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"url": self.url, "status": self.status, "reason": self.reason}


@dataclass(frozen=True)
class GitObject:
    sha: str
    kind: str  # blob, tree, commit, tag
    data: bytes


class GitBatch:
    """A long-lived `git cat-file --batch` on one clone; `read(name)` is None for a missing object."""

    def __init__(self, clone: Path) -> None:
        self._process = subprocess.Popen(  # noqa: S603 - fixed argv, object names on stdin
            ["git", "-C", str(clone), "cat-file", "--batch"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._lock = threading.Lock()

    def read(self, name: str) -> GitObject | None:
        if not name or any(ch in name for ch in "\n\r\0"):
            return None
        assert self._process.stdin is not None and self._process.stdout is not None
        with self._lock:
            self._process.stdin.write(name.encode("utf-8", "surrogateescape") + b"\n")
            self._process.stdin.flush()
            header = self._process.stdout.readline().decode("utf-8", "replace").rstrip("\n")
            fields = header.split(" ")
            if len(fields) != 3 or not fields[2].isdigit():
                return None  # "<name> missing" or "<name> ambiguous"
            data = self._process.stdout.read(int(fields[2]) + 1)[:-1]
            return GitObject(fields[0], fields[1], data)

    def close(self) -> None:
        if self._process.poll() is None:
            assert self._process.stdin is not None
            self._process.stdin.close()
            try:
                self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._process.kill()


def line_count(data: bytes) -> int:
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


class SyncedIssues:
    """Issue numbers synced under DATA_DIR/issues (core/issue_store.py); None for a repository
    whose issues were never synced, so its links are checked by shape only."""

    def __init__(self, data_dir: Path | None) -> None:
        self._data_dir = data_dir
        self._numbers: dict[str, set[int] | None] = {}

    def numbers(self, repo: str) -> set[int] | None:
        if repo not in self._numbers:
            self._numbers[repo] = self._load(repo)
        return self._numbers[repo]

    def _load(self, repo: str) -> set[int] | None:
        if self._data_dir is None or not issues_path(self._data_dir, repo).is_file():
            return None
        try:
            found = {issue.number for issue in iter_issues(self._data_dir, repo)}
        except (OSError, ValueError):
            return None
        return found or None


class CitationChecker:
    def __init__(self, repos_dir: Path, bases: RepoBases, issues: SyncedIssues | None = None) -> None:
        self._repos_dir = repos_dir
        self._bases = bases
        self._issues = issues or SyncedIssues(None)
        self._batches: dict[str, GitBatch | None] = {}
        self._verdicts: dict[str, LinkVerdict] = {}

    def check(self, url: str) -> LinkVerdict:
        if url not in self._verdicts:
            self._verdicts[url] = self._check(url)
        return self._verdicts[url]

    def close(self) -> None:
        for batch in self._batches.values():
            if batch is not None:
                batch.close()
        self._batches.clear()

    def __enter__(self) -> "CitationChecker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- checks -------------------------------------------------------------------------------

    def _check(self, url: str) -> LinkVerdict:
        blob = parse_blob(url, self._bases)
        if blob is not None:
            return self._check_blob(blob)
        issue = parse_issue(url)
        if issue is not None:
            return self._check_issue(issue)
        if looks_like_code_host_link(url):
            return LinkVerdict(url, "unchecked", "not a permalink or issue of an allowlisted repository")
        return LinkVerdict(url, "unchecked", "not a repository link")

    def _check_blob(self, link: BlobLink) -> LinkVerdict:
        fail: Callable[[str], LinkVerdict] = lambda why: LinkVerdict(link.url, "failed", why)  # noqa: E731
        batch = self._batch(link.repo)
        if batch is None:
            return LinkVerdict(link.url, "unchecked", f"no local clone of {link.repo}")
        if len(link.ref_and_path) < 2:
            return LinkVerdict(link.url, "unchecked", "no file path in the link")
        if any(part in ("..", ".") for part in link.ref_and_path):
            return fail("malformed path")
        resolved = self._resolve(batch, link.ref_and_path)
        if resolved is None:
            if link.at_commit:
                return fail(f"commit {link.ref} is not in the local clone of {link.repo}")
            return LinkVerdict(link.url, "unchecked", f"ref {link.ref} is not in the local clone of {link.repo}")
        commit, path = resolved
        found = batch.read(f"{commit}:{path}")
        if found is None:
            return fail(f"{path} does not exist at {commit[:12]}")
        if link.start is None:
            return LinkVerdict(link.url, "valid")
        if found.kind != "blob":
            return fail(f"{path} is a {found.kind}, not a file with lines")
        lines = line_count(found.data)
        assert link.end is not None
        if link.start < 1 or link.end < link.start or link.end > lines:
            return fail(f"lines {link.start}-{link.end} are past the end of {path} ({lines} lines)")
        return LinkVerdict(link.url, "valid")

    def _resolve(self, batch: GitBatch, segments: tuple[str, ...]) -> tuple[str, str] | None:
        """(commit id, path) for the longest-known ref prefix of blob/<ref...>/<path>."""
        for cut in range(1, min(_MAX_REF_SEGMENTS, len(segments) - 1) + 1):
            ref = "/".join(segments[:cut])
            for name in (ref, f"origin/{ref}"):
                found = batch.read(f"{name}^{{commit}}")
                if found is not None:
                    return found.sha, "/".join(segments[cut:])
        return None

    def _check_issue(self, link: IssueLink) -> LinkVerdict:
        repo = self._bases.repo_for_issue_tracker(link.host, link.owner, link.name)
        if repo is None:
            wrong_home = self._bases.repo_for(link.host, link.owner, link.name)
            if wrong_home is not None:
                host, tracker = self._bases.issue_home(wrong_home)
                return LinkVerdict(link.url, "failed", f"issues of {wrong_home} are tracked at {host}/{tracker}")
            return LinkVerdict(link.url, "unchecked", "issue of a repository outside the allowlist")
        numbers = self._issues.numbers(repo) if link.kind == "issues" else None
        if numbers is None:
            return LinkVerdict(link.url, "valid", "shape only (not synced)")
        if link.number in numbers:
            return LinkVerdict(link.url, "valid")
        if link.number > max(numbers):
            return LinkVerdict(link.url, "unchecked", "issue newer than the last issue sync")
        return LinkVerdict(link.url, "failed", f"#{link.number} is not among the synced issues of {repo}")

    def _batch(self, repo: str) -> GitBatch | None:
        if repo not in self._batches:
            owner, name = repo.split("/", 1)
            clone = self._repos_dir / owner / name
            self._batches[repo] = GitBatch(clone) if (clone / ".git").exists() or (clone / "HEAD").is_file() else None
        return self._batches[repo]

