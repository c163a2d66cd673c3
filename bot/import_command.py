"""`python -m bot import FILE.jsonl [--repo owner/name]`: thread dumps into DATA_DIR/issues.

Each line is one issue or pull-request thread, in any of three shapes:

a) a snapshot line: {"repo": "owner/name", "issue": {GitHub REST issue fields}, "comments": [...]};
b) one API issue object as GitHub or GitCode return it, optionally with a "comments" list of
   comment objects; its repository comes from "repository_url", "repository": {"full_name"}, or
   --repo;
c) a line of our own store (StoredIssue.to_json()), e.g. copied from another DATA_DIR.

Every shape becomes an API-shaped item and goes through the sync's own `to_stored`, so an imported
thread is clipped like a downloaded one and its URL is built from the allowlisted repository and
the number, never taken from the file. The file is untrusted: a line that is not JSON, not a
thread, in a repository outside the allowlist, or not UTF-8 is skipped (or repaired) and counted;
the command ends with one summary line. It writes through core.issue_store.append_issues under the
same lock as `sync --issues`.
"""
from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from bot.issues.hosts import BadItem, Limits, item_number, keep_comments, to_comment, to_stored
from bot.issues.sync import IssuesBusy, exclusive
from bot.settings import Settings
from core.issue_store import StoredIssue, append_issues, issues_dir, issues_path, parse_time, stored_versions, utc_iso
from core.research.repos import REPOSITORIES, RepoInfo, find_repo

log = logging.getLogger(__name__)

_MAX_LINE_BYTES = 64 * 1024 * 1024  # a longer line is read past, never held: no thread needs it after clipping
_BATCH = 500  # threads held per repository before an append (a dump can be large)
_MAX_NUMBER = 10**9  # issue numbers are small positive integers; anything else is not a thread
_MAX_NOTED = 10  # problem lines named in the log; the rest are only counted
_SURROGATE = re.compile("[\ud800-\udfff]")  # one character class: linear
_CONVERSION_ERRORS = (BadItem, ValueError, TypeError, KeyError, OverflowError, RecursionError)


@dataclass
class ImportTally:
    """What happened to each line, for the one summary line."""

    imported: int = 0
    already_stored: int = 0  # the store holds this version or a newer one
    repos: set[str] = field(default_factory=set)
    malformed: int = 0  # not JSON
    not_threads: int = 0  # JSON, but no thread in a shape we know
    unknown_repo: int = 0
    no_repo: int = 0  # a plain API object without a repository, and no --repo
    too_long: int = 0
    bad_utf8: int = 0
    bodies_clipped: int = 0
    comments_clipped: int = 0
    comments_dropped: int = 0  # beyond ISSUES_MAX_COMMENTS

    @property
    def usable(self) -> int:
        return self.imported + self.already_stored

    def summary(self) -> str:
        head = f"imported {_n(self.imported, 'thread')} into {_n(len(self.repos), 'repository', 'repositories')}"
        notes = [
            (self.already_stored, "already stored"),
            (self.malformed, _plural(self.malformed, "malformed line", "malformed lines")),
            (self.not_threads, _plural(self.not_threads, "line that is not a thread", "lines that are not threads")),
            (self.unknown_repo, _plural(self.unknown_repo, "in an unknown repository", "in unknown repositories")),
            (self.no_repo, "without a repository (use --repo)"),
            (self.too_long, _plural(self.too_long, "line too long", "lines too long")),
            (self.bad_utf8, _plural(self.bad_utf8, "line with invalid UTF-8 repaired", "lines with invalid UTF-8 repaired")),
            (self.bodies_clipped, _plural(self.bodies_clipped, "body clipped", "bodies clipped")),
            (self.comments_clipped, _plural(self.comments_clipped, "comment clipped", "comments clipped")),
            (self.comments_dropped, _plural(self.comments_dropped, "comment over ISSUES_MAX_COMMENTS dropped", "comments over ISSUES_MAX_COMMENTS dropped")),
        ]
        said = [f"{count} {text}" for count, text in notes if count]
        return head + (f" ({', '.join(said)})" if said else "")


def _plural(count: int, one: str, many: str) -> str:
    return one if count == 1 else many


def _n(count: int, one: str, many: str | None = None) -> str:
    return f"{count} {_plural(count, one, many or one + 's')}"


@dataclass(frozen=True)
class _Raw:
    """One line's thread, API-shaped, before its repository is checked."""

    repo: str | None  # as the line names it: canonical, or the name on the issue host
    item: dict[str, Any]
    comments: list[dict[str, Any]]


def run_import(settings: Settings, file: str | Path, repo: str | None = None, say: Callable[[str], None] = print) -> int:
    """0: something usable was found; 1: nothing was, or the store could not be written; 2: no file
    to read, or --repo names no allowlisted repository."""
    path = Path(file)
    fallback_repo = None
    if repo is not None:
        fallback_repo = resolve_repo(repo)
        if fallback_repo is None:
            say(f"--repo {repo[:100]!r} is not an allowlisted repository; use one of: {', '.join(r.name for r in REPOSITORIES)}")
            return 2
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        say(f"no such file: {path}")
        return 2
    except OSError as exc:
        say(f"cannot read {path} ({type(exc).__name__}: {exc.strerror or exc})")
        return 2
    tally = ImportTally()
    try:
        with handle, exclusive(settings.data_dir):
            _Importer(settings, path, fallback_repo, tally).run(handle)
    except IssuesBusy as exc:
        say(f"{exc}; try again when it is done")
        return 1
    except OSError as exc:
        say(f"import stopped: could not read {path} or write under {issues_dir(settings.data_dir)} ({type(exc).__name__}: {exc.strerror or exc})")
        say(tally.summary())
        return 1
    say(tally.summary())
    if tally.imported:
        say("run `python -m bot index` to make them searchable")
    return 0 if tally.usable else 1


def resolve_repo(name: str) -> RepoInfo | None:
    """An allowlisted repository by its canonical name or by the name its issues live under on the
    host (GitCode's Ascend/MindIE-LLM is verylucky01/MindIE-LLM); GitCode writes "owner / name"."""
    cleaned = "/".join(part.strip() for part in name[:300].split("/"))
    return find_repo(cleaned) or next((r for r in REPOSITORIES if r.issue_repo.lower() == cleaned.lower()), None)


@dataclass(frozen=True)
class _Clips:
    """What clipping a thread to the sync's limits cut, counted only when the thread is imported."""

    body: bool
    comments: int  # comments cut to ISSUES_COMMENT_MAX_CHARS
    dropped: int  # comments beyond ISSUES_MAX_COMMENTS


class _Importer:
    def __init__(self, settings: Settings, path: Path, fallback_repo: RepoInfo | None, tally: ImportTally) -> None:
        self.data_dir = settings.data_dir
        self.limits = Limits(settings.issues_page_size, settings.issues_body_max_chars, settings.issues_comment_max_chars, settings.issues_max_comments)
        self.fallback_repo = fallback_repo
        self.tally = tally
        self.file_name = path.name
        # the last resort for a thread with no date at all: when the dump was written
        self.file_time = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.known: dict[str, dict[int, str]] = {}  # repo -> number -> newest stored updated_at
        self.pending: dict[str, list[StoredIssue]] = {}
        self.noted = 0

    def run(self, handle: IO[bytes]) -> None:
        for number, raw in _lines(handle):
            if raw is None:
                self._problem(number, "too_long", f"longer than {_MAX_LINE_BYTES} bytes, skipped")
                continue
            if raw.strip():
                self._line(number, raw)
        for repo in list(self.pending):
            self._flush(repo)

    def _line(self, number: int, raw: bytes) -> None:
        try:
            text, repaired = raw.decode("utf-8"), False
        except UnicodeDecodeError:
            text, repaired = raw.decode("utf-8", errors="replace"), True
        try:
            obj = json.loads(text.lstrip("\ufeff"))
        except (ValueError, RecursionError):
            self._problem(number, "malformed", "not valid JSON")
            return
        found = _shape(obj)
        if found is None:
            self._problem(number, "not_threads", "not an issue or pull-request thread")
            return
        info = self._repo_of(number, found)
        if info is None:
            return
        try:
            issue, clips = self._stored(info, found)
        except _CONVERSION_ERRORS:
            self._problem(number, "not_threads", "a thread without a usable number or dates")
            return
        issue, surrogates = _encodable(issue)
        if repaired or surrogates:
            self.tally.bad_utf8 += 1
        if self._keep(issue):
            self.tally.bodies_clipped += clips.body
            self.tally.comments_clipped += clips.comments
            self.tally.comments_dropped += clips.dropped

    def _repo_of(self, number: int, found: _Raw) -> RepoInfo | None:
        if found.repo is None:
            if self.fallback_repo is None:
                self._problem(number, "no_repo", "no repository named (use --repo)")
            return self.fallback_repo
        info = resolve_repo(found.repo)
        if info is None:
            self._problem(number, "unknown_repo", "not an allowlisted repository")
        return info

    def _stored(self, info: RepoInfo, found: _Raw) -> tuple[StoredIssue, _Clips]:
        number = item_number(found.item)
        if not 0 < number < _MAX_NUMBER:
            raise BadItem("number")
        item, comments = _dated(found.item, found.comments, self.file_time)
        limits = self.limits
        built = [to_comment(c, _association(c), limits) for c in comments]  # clipped like the sync's
        long_ones = {id(made) for made, c in zip(built, comments) if len(_text(c.get("body"))) > limits.comment_chars}
        kept = keep_comments(built, limits.max_comments)  # the sync's choice: the last ones, a maintainer's answer kept
        clips = _Clips(
            body=len(_text(item.get("body"))) > limits.body_chars,
            comments=sum(1 for c in kept if id(c) in long_ones),
            dropped=len(built) - len(kept),
        )
        # to_stored builds the URL from the allowlisted repository and the number: never the file's
        return to_stored(info, item, kept, limits), clips

    def _keep(self, issue: StoredIssue) -> bool:
        """Queue the thread for appending; False when the store already has this version or a newer one."""
        known = self.known.get(issue.repo)
        if known is None:
            known = self.known[issue.repo] = stored_versions(issues_path(self.data_dir, issue.repo))
        held = known.get(issue.number)
        if held is not None and _not_older(held, issue.updated_at):
            self.tally.already_stored += 1  # a re-import, or the sync already holds a newer version
            return False
        known[issue.number] = issue.updated_at
        batch = self.pending.setdefault(issue.repo, [])
        batch.append(issue)
        if len(batch) >= _BATCH:
            self._flush(issue.repo)
        return True

    def _flush(self, repo: str) -> None:
        batch = self.pending.pop(repo, [])
        self.tally.imported += append_issues(self.data_dir, repo, batch)  # appended and fsynced
        if batch:
            self.tally.repos.add(repo)

    def _problem(self, number: int, counter: str, reason: str) -> None:
        setattr(self.tally, counter, getattr(self.tally, counter) + 1)
        # Line numbers and our own words only: the file's text never reaches a log line.
        if self.noted < _MAX_NOTED:
            log.warning("%s line %d: %s", self.file_name, number, reason)
        self.noted += 1


def _lines(handle: IO[bytes]) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) per line; None for a line over _MAX_LINE_BYTES, which is read past
    in bounded chunks, never held whole."""
    number = 0
    while chunk := handle.readline(_MAX_LINE_BYTES + 1):
        number += 1
        if len(chunk) > _MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):
                chunk = handle.readline(_MAX_LINE_BYTES)
            yield number, None
        else:
            yield number, chunk


def _shape(obj: Any) -> _Raw | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("issue"), dict):  # (a) snapshot: the issue, its repository and comments side by side
        return _Raw(_name(obj.get("repo")), obj["issue"], _dicts(obj.get("comments")))
    if isinstance(obj.get("repo"), str) and "number" in obj:  # (c) our own store (API objects never carry "repo")
        return _from_stored(obj)
    if "number" in obj and ("title" in obj or "created_at" in obj):  # (b) one API issue object
        return _Raw(_api_repo(obj), obj, _dicts(obj.get("comments")))  # GitHub's "comments" count is not a list: none
    return None


def _from_stored(obj: dict[str, Any]) -> _Raw:
    item = {key: obj.get(key) for key in ("number", "title", "body", "labels", "state", "created_at", "updated_at", "closed_at", "merged")}
    author = obj.get("author")
    if isinstance(author, str) and author:
        item["user"] = {"login": author}
    if obj.get("kind") == "pull":
        item["pull_request"] = {"merged_at": None}  # marks a pull request; `merged` carries the flag
    comments = [
        {"user": {"login": c.get("author")}, "author_association": c.get("association"), "body": c.get("body"), "created_at": c.get("created_at")}
        for c in _dicts(obj.get("comments"))
    ]
    return _Raw(obj["repo"], item, comments)


def _api_repo(obj: dict[str, Any]) -> str | None:
    """GitCode: repository.full_name; GitHub: repository_url (…/repos/owner/name), used only to
    name the repository, which must then be allowlisted."""
    repository = obj.get("repository")
    if isinstance(repository, dict) and isinstance(repository.get("full_name"), str):
        return repository["full_name"]
    url = obj.get("repository_url")
    if not isinstance(url, str):
        return None
    try:
        parts = [p for p in urlsplit(url[:500]).path.split("/") if p]
    except ValueError:
        return None
    return f"{parts[-2]}/{parts[-1]}" if len(parts) >= 3 and parts[-3] == "repos" else None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [x for x in value if isinstance(x, dict)] if isinstance(value, list) else []


def _when(value: Any) -> str | None:
    """A timestamp as the store writes it, or None when absent or not a date."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        return utc_iso(value[:64])
    except (ValueError, OverflowError):
        return None


def _dated(raw: dict[str, Any], comments: list[dict[str, Any]], file_time: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The item with the dates to_stored needs, filled in when the dump lacks them: created_at falls
    back to the first comment's date, then to the file's; updated_at to the newest date known."""
    comments = [{**c, "created_at": _when(c.get("created_at")) or ""} for c in comments]
    said = sorted(c["created_at"] for c in comments if c["created_at"])
    created = _when(raw.get("created_at")) or (said[0] if said else file_time)
    closed = _when(raw.get("closed_at")) or _when(raw.get("finished_at"))
    updated = _when(raw.get("updated_at")) or max([created, *said, *([closed] if closed else [])])
    labels = raw.get("labels")
    item = {
        **raw,
        "created_at": created,
        "updated_at": updated,
        "closed_at": closed,
        "finished_at": None,  # GitCode's name for closed_at, already read
        "labels": labels if isinstance(labels, list) else [],  # a string would become one label per character
    }
    return item, comments


def _association(comment: dict[str, Any]) -> str:
    """GitHub's author_association when the dump has it; "" otherwise (GitCode has none: the
    resolution code decides who maintains a GitCode repository)."""
    value = comment.get("author_association")
    return value[:40] if isinstance(value, str) else ""


def _encodable(issue: StoredIssue) -> tuple[StoredIssue, bool]:
    """JSON may spell a lone surrogate ("\\ud800"), which parses but cannot be written as UTF-8:
    replace it rather than fail the append."""
    text = json.dumps(issue.to_json(), ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return StoredIssue.from_json(json.loads(_SURROGATE.sub("\ufffd", text))), True  # as a bad byte decodes
    return issue, False


def _not_older(held: str, incoming: str) -> bool:
    try:
        return parse_time(held) >= parse_time(incoming)
    except (ValueError, OverflowError):
        return False
