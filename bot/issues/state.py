"""DATA_DIR/issues/state.json: where each repository's issue download stands.

Per repository:
- `since`: the newest updated_at of the last completed run; the next run asks for issues updated
  at or after it.
- `pending`: a run in progress (or cut short): the `since` that run asked with, the next page to
  fetch (GitHub: the path and query of its Link `next`, which is a cursor on large listings;
  GitCode: a page number), the newest updated_at seen so far and the pages done, and whether it is
  a full listing. It is written only after the page's issues are on disk (fsynced), so a crash
  resumes at the first page not yet stored.
- `full_listed_at`: when a full listing (no `since`) last completed and removed the threads the
  host no longer lists; the next one is due ISSUES_FULL_LISTING_DAYS later.

The file holds no token and nothing from the APIs but timestamps and counters. Writes are atomic
(temporary file, fsync, rename). The thread numbers a full listing has seen so far live beside the
issue file (ListedNumbers), because a full walk can span runs.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from core.issue_store import issues_dir, issues_path


@dataclass(frozen=True)
class Pending:
    since: str | None
    next_page: int
    newest: str | None
    pages: int = 0
    next_path: str | None = None  # relative to the API base URL; None: ask for `next_page`
    full: bool = False  # a full listing: when it completes, stored threads it did not list are removed


@dataclass(frozen=True)
class RepoState:
    since: str | None = None
    synced_at: str | None = None
    pending: Pending | None = None
    full_listed_at: str | None = None  # the last full listing that completed (and removed what it did not list)


@dataclass
class SyncState:
    path: Path
    repos: dict[str, RepoState] = field(default_factory=dict)

    @classmethod
    def load(cls, data_dir: Path) -> SyncState:
        path = issues_dir(data_dir) / "state.json"
        state = cls(path)
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return state
        except (OSError, ValueError) as exc:
            raise StateError(f"{path} is unreadable ({type(exc).__name__}); move it aside to start over") from None
        for name, entry in (raw.get("repos") or {}).items() if isinstance(raw, dict) else ():
            try:
                state.repos[name] = _entry(entry)
            except (TypeError, ValueError, KeyError):
                raise StateError(f"{path}: the entry for {name} is malformed; delete it to resync that repository") from None
        return state

    def get(self, repo: str) -> RepoState:
        return self.repos.get(repo, RepoState())

    def put(self, repo: str, entry: RepoState) -> None:
        self.repos[repo] = entry
        self.save()

    def set_pending(self, repo: str, pending: Pending | None) -> None:
        self.put(repo, replace(self.get(repo), pending=pending))

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        body = {"version": 1, "repos": {name: _plain(e) for name, e in sorted(self.repos.items())}}
        tmp = self.path.with_suffix(".json.tmp")
        with tmp.open("w", encoding="utf-8") as handle:
            json.dump(body, handle, indent=1, sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.path)


class StateError(Exception):
    pass


def _plain(entry: RepoState) -> dict[str, Any]:
    data = asdict(entry)
    return data


def _opt_str(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise TypeError("expected a string")


def _entry(raw: Any) -> RepoState:
    if not isinstance(raw, dict):
        raise TypeError("not an object")
    pending_raw = raw.get("pending")
    pending = None
    if pending_raw is not None:
        page = pending_raw["next_page"]
        pages = pending_raw.get("pages", 0)
        if not isinstance(page, int) or page < 1 or not isinstance(pages, int):
            raise ValueError("bad page")
        next_path = _opt_str(pending_raw.get("next_path"))
        if next_path is not None and not next_path.startswith("/"):
            raise ValueError("bad next_path")
        full = pending_raw.get("full", False)
        if not isinstance(full, bool):
            raise TypeError("full is not a boolean")
        pending = Pending(_opt_str(pending_raw.get("since")), page, _opt_str(pending_raw.get("newest")), pages, next_path, full)
    return RepoState(_opt_str(raw.get("since")), _opt_str(raw.get("synced_at")), pending, _opt_str(raw.get("full_listed_at")))


class ListedNumbers:
    """The thread numbers a full listing has seen so far, one per line in <name>.listed beside the
    issue file. A full walk of a large repository can span runs (--max-pages, a rate-limit stop), and
    removing "what it did not list" needs the numbers of the pages an earlier run read. Appended and
    fsynced with each page, before the cursor moves past it; a garbled line only adds a number, which
    errs toward keeping a thread, never toward removing one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.numbers: set[int] = set()

    @classmethod
    def for_repo(cls, data_dir: Path, repo: str) -> ListedNumbers:
        return cls(issues_path(data_dir, repo).with_suffix(".listed"))

    def load(self) -> None:
        try:
            lines = self.path.read_bytes().split(b"\n")
        except FileNotFoundError:
            return
        self.numbers.update(int(line) for line in lines if line.strip().isdigit())

    def add(self, numbers: Iterable[int]) -> None:
        fresh = [n for n in numbers if n not in self.numbers]
        if not fresh:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as handle:
            # a partial last line from a crash must not glue onto the first new number
            handle.write(b"\n" + "".join(f"{n}\n" for n in fresh).encode("ascii"))
            handle.flush()
            os.fsync(handle.fileno())
        self.numbers.update(fresh)

    def clear(self) -> None:
        self.path.unlink(missing_ok=True)
        self.numbers.clear()
