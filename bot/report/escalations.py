"""The escalation log: one record per question taken upstream, in one Redis stream per workspace.

core/escalate.py's Escalator tells this log (its `EscalationJournal`) of each new escalation once:
when the pre-filled new-issue link is given ("opened") and when the issue is filed through the API
("filed"). A record holds where the thread is, the product, the issue's URL, the state and the
question clipped and redacted like the answer log's; the streams keep the answer log's retention
limits (bot/report/limits.py) and are written the same way (bot/report/log.py's append_bounded).

The report (bot/report/data.py) reads them into its escalations section: counts per product and
state, and the list with links. A pre-filled link carries the question in its body, so for a scope
that may not see question text (the operator) an opened escalation links to the repository's issues
page instead.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError

from bot.report.log import QUESTION_CHARS, ThreadRecord, WorkspaceLog, append_bounded, split_scope
from bot.report.post import place_context
from core.escalate import Escalation
from core.messages import InboundMessage

log = logging.getLogger(__name__)

STATES = ("opened", "filed", "answered", "closed")
# states whose URL is the issue itself (no question in it): anyone who sees the report may get it
ISSUE_STATES = frozenset({"filed", "answered", "closed"})
MAX_READ = 5_000  # escalations read per workspace and report (a busy team files a few a day)
RECORD_VERSION = 1


@dataclass(frozen=True, slots=True)
class EscalationRecord(ThreadRecord):
    repo: str  # the knowledge base's repository id
    product: str  # its display name
    state: str  # opened | filed | answered (a maintainer replied, bot/issues/followup.py) | closed
    url: str  # the filed issue, or the pre-filled new-issue link
    issues_page: str  # the repository's issues list (what the operator is shown for an opened one)
    question: str  # clipped and redacted
    question_id: str  # core/escalate.py's digest: one escalation per question and thread
    language: str = ""  # the thread's (en | zh): a follow-up speaks it
    place: tuple[tuple[str, Any], ...] = ()  # what a follow-up needs to answer there (bot/report/post.py)


class EscalationLog(WorkspaceLog):
    @property
    def index(self) -> str:
        return self._keys.escalation_log_index

    async def escalated(self, where: InboundMessage, escalation: Escalation, question: str, issue_url: str,
                        state: str, at: float, language: str = "") -> None:
        """Store one escalation (core/escalate.py's EscalationJournal). A Redis failure is logged, not
        raised: the user already has the link."""
        scope = f"{where.platform}:{where.workspace}"
        body = {"v": RECORD_VERSION, "platform": where.platform, "workspace": where.workspace,
                "channel": where.channel, "thread": where.thread, "repo": escalation.repo,
                "product": escalation.product, "state": state, "url": issue_url,
                "issues_page": escalation.issues_page,
                # redacted before clipping, so a token cut in half by the clip is still recognised
                "question": " ".join(self._redact(question).split())[:QUESTION_CHARS],
                "question_id": escalation.question_id, "language": language or where.language,
                "place": place_context(where.reply_context)}
        try:
            await self.append(scope, json.dumps(body, ensure_ascii=False), at)
        except (RedisError, OSError) as exc:
            log.warning("could not store an escalation record: %s", type(exc).__name__)

    async def progressed(self, record: EscalationRecord, state: str, issue_url: str, at: float) -> None:
        """What upstream did on an escalation (bot/issues/followup.py): one more record, the same
        escalation in its new state with its issue's URL, so the report and the digest show it."""
        body = {"v": RECORD_VERSION, "platform": record.platform, "workspace": record.workspace,
                "channel": record.channel, "thread": record.thread, "repo": record.repo, "product": record.product,
                "state": state, "url": issue_url, "issues_page": record.issues_page, "question": record.question,
                "question_id": record.question_id, "language": record.language, "place": dict(record.place)}
        await self.append(record.scope, json.dumps(body, ensure_ascii=False), at)

    async def append(self, scope: str, record: str, at: float, stream_id: str = "*") -> None:
        key = self._keys.escalation_log(*split_scope(scope))
        await append_bounded(self._redis, key, self.index, self._limits, scope, record, at, stream_id)

    async def read(self, scope: str, since: float, until: float, *, now: float | None = None) -> list[EscalationRecord]:
        """The scope's escalations from `since` to `until` within its retention, oldest first, at most MAX_READ."""
        first, last = self.window(scope, since, until, now)
        entries = await self._redis.xrange(self._keys.escalation_log(*split_scope(scope)), f"{first}-0", f"{last}",
                                           count=MAX_READ)
        records = (_record(entry_id, fields) for entry_id, fields in entries)
        return [r for r in records if r is not None]


def _record(entry_id: bytes | str, fields: dict) -> EscalationRecord | None:
    """A stored record, or None when it is not one (written by hand, or by another version)."""
    try:
        ms = int((entry_id.decode() if isinstance(entry_id, bytes) else entry_id).split("-", 1)[0])
        raw = fields.get(b"j", fields.get("j"))
        v = json.loads(raw)
        if v.get("v") != RECORD_VERSION or v.get("state") not in STATES:
            raise ValueError("not a record")
        names = ("platform", "workspace", "channel", "thread", "repo", "product", "state", "url", "issues_page",
                 "question", "question_id")
        values = [v[name] for name in names]
        if not all(isinstance(x, str) for x in values):
            raise ValueError("not a record")
        language = v.get("language") if v.get("language") in ("en", "zh") else ""
        place = v.get("place") if isinstance(v.get("place"), dict) else {}
        return EscalationRecord(ms / 1000, *values, language=language,
                                place=tuple(sorted(place_context(place).items())))
    except (AttributeError, KeyError, TypeError, ValueError):
        log.warning("escalation log: skipped an unreadable record")
        return None
