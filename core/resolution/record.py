"""A resolution record: what resolved one thread, who said so, and how sure that is.

Deterministic (the offline path has no model). The thread's text is untrusted: a record keeps a
short plain-text summary of the deciding comment and the technical items in it (commands,
versions, flags, env vars), never a link from it; the only URL a record carries is the thread's
own, built from the repository and number.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import IntEnum
from typing import Any, Literal

Role = Literal["maintainer", "reporter", "user", "none"]


class Certainty(IntEnum):
    """How far a resolution can be trusted, best last (issue 20's order)."""

    NONE = 0  # open, or nothing said
    CLOSED = 1  # closed without words
    OTHER = 2  # a workaround from someone who is neither maintainer nor reporter
    REPORTER = 3  # the reporter's own workaround ("solved after downgrading …")
    MAINTAINER = 4  # a maintainer's fix, or a merged pull request that fixes it
    CONFIRMED = 5  # a maintainer's fix the reporter confirmed


@dataclass(frozen=True)
class Resolution:
    repo: str  # canonical owner/name
    number: int
    url: str  # the thread's own page (built, never taken from text)
    title: str  # untrusted: shown only as plain text
    state: str  # open | closed
    kind: str  # issue | pull
    certainty: int = Certainty.NONE
    said_by: Role = "none"
    author: str = ""  # login of who said it
    summary: str = ""  # plain text, links and markup removed, one or two sentences
    fix_items: tuple[str, ...] = ()  # commands, versions, flags, env vars from the deciding comment
    fixed_by: tuple[int, ...] = ()  # pull requests that fix it (merged ones first)
    closed_by: tuple[int, ...] = ()  # merged pull requests that say they close it ("Fixes #N"): the strong kind
    duplicate_of: int | None = None
    release: str = ""  # the first release tag that contains the fix
    confirmed: bool = False  # the reporter said it works after the fix
    signatures: tuple[str, ...] = ()  # error signatures of the report
    error_line: str = ""  # the decisive error line of the report, as written
    fixes: tuple[int, ...] = field(default=())  # pull requests only: the issues it closes
    merged: bool = False
    said_at: str = ""  # YYYY-MM-DD of the words the summary quotes: "not supported" is true as of a date

    @property
    def resolved(self) -> bool:
        """Something an answer can lead with: words from someone, a fixing PR or a duplicate."""
        return bool(self.summary or self.fixed_by or self.duplicate_of) and self.certainty >= Certainty.OTHER

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items() if v not in ((), "", None, False, 0) or k in ("repo", "number", "url")}

    @classmethod
    def from_json(cls, data: Any) -> Resolution:
        """Raises ValueError for anything that is not a record (a damaged or foreign file)."""
        if not isinstance(data, dict) or not isinstance(data.get("repo"), str) or not isinstance(data.get("url"), str):
            raise ValueError("not a resolution record")
        if isinstance(data.get("number"), bool) or not isinstance(data.get("number"), int):
            raise ValueError("a record's number is not an integer")
        tuples = {"fix_items", "fixed_by", "closed_by", "signatures", "fixes"}
        known = {f for f in cls.__dataclass_fields__}
        values = {k: (tuple(v) if k in tuples else v) for k, v in data.items() if k in known}
        values.setdefault("title", "")
        values.setdefault("state", "open")
        values.setdefault("kind", "issue")
        return cls(**values)
