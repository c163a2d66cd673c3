"""Bringing upstream's answer back into the chat thread an issue was escalated from.

After `sync --issues` has stored what changed, for every workspace in
ESCALATION_FOLLOWUP_WORKSPACES (opt-in, `platform:workspace`): each escalation its threads made
(bot/report/escalations.py) is matched to its stored issue, and what happened there since the
escalation is posted once into that thread, and nowhere else:

- which issue: a filed escalation's URL (under the repository's own issues page, nothing else);
  for a pre-filled link, the issue a user filed from it, found by the reference its body starts
  with (core/escalate.py `reference`), created after the escalation; the first one found is bound
  to the escalation for good (SET NX), so a later copy of the marker cannot take it over;
- what counts: a comment by a maintainer (GitHub's OWNER/MEMBER/COLLABORATOR, or a login in
  ISSUES_MAINTAINERS for the repository) written after the escalation, and the issue being closed
  after it. Anyone else's comment is not posted;
- once: each event is claimed with SET NX under the escalation before posting (so repeated and
  concurrent syncs post it once); a post that fails releases its claims for the next sync, and the
  delivery id is the claim's, so a retried post does not repeat what reached the chat;
- the text is untrusted: redacted like the logs (configured secrets, token shapes), mentions
  defanged (@channel, @all, @所有人, <@U…>, @login), links in it dropped (the one link shown is
  the issue's own, built from the repository, not taken from the text), one line clipped to
  QUOTE_CHARS, said to be quoted and unchecked, in the thread's language.
"""
from __future__ import annotations

import hashlib
import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from bot.report.escalations import EscalationLog, EscalationRecord
from bot.report.limits import LogLimits
from bot.report.post import NotPosted, Place, Poster
from core.escalate import REFERENCE_PREFIX, _defang
from core.issue_store import IssueComment, StoredIssue, iter_issues, parse_time
from core.keys import Keys
from core.research.redact import Redactor

log = logging.getLogger(__name__)

MAINTAINER_ROLES = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
QUOTE_CHARS = 280
REF_SCAN_CHARS = 2_000  # the reference is the body's first line
CLAIM_DAYS = 400  # longer than any escalation is kept (366 days at most)
_REF = re.compile(re.escape(REFERENCE_PREFIX) + r"([0-9a-f]{16})")
_MD_LINK = re.compile(r"!?\[([^\]\n]{0,200})\]\([^)\s]{0,2000}\)")
_URL = re.compile(r"<?(?:https?|ftp)://[^\s<>]{1,2000}>?|<mailto:[^\s>]{1,200}>|\bwww\.[^\s<>]{1,2000}", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Tracked:
    """One escalated question in one thread, as its records tell."""

    scope: str
    record: EscalationRecord  # the latest record (its state, url, place)
    escalated_at: float  # the first record's time: what happened upstream after it counts
    filed_url: str = ""


@dataclass
class FollowupOutcome:
    posted: int = 0
    failed: list[str] = field(default_factory=list)
    watched: int = 0

    def line(self) -> str:
        text = f"escalation follow-up: {self.watched} escalation(s) watched, {self.posted} posted"
        return text + "".join(f"; {reason}" for reason in self.failed[:5])


def sanitize_quote(text: str, redact: Callable[[str], str]) -> str:
    """A maintainer's words, safe to post in a chat: no secret, no mention, no link, one short line."""
    text = redact(text[:QUOTE_CHARS * 20])
    text = _MD_LINK.sub(lambda m: m.group(1), text)
    text = _URL.sub("(link)", text)
    text = _SPACE.sub(" ", _defang(text)).strip()
    return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS - 1].rstrip() + "…"


def is_maintainer(comment: IssueComment, maintainers: Iterable[str]) -> bool:
    return comment.association.upper() in MAINTAINER_ROLES or (bool(comment.author) and comment.author in set(maintainers))


def _time(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return parse_time(value).timestamp()
    except ValueError:
        return None


def events_after(issue: StoredIssue, since: float, maintainers: Sequence[str]) -> list[tuple[str, IssueComment | None]]:
    """(event id, comment) for each maintainer comment after `since`, then ("closed:…", None) when the
    issue was closed after it; oldest first."""
    found: list[tuple[str, IssueComment | None]] = []
    for comment in issue.comments:
        at = _time(comment.created_at)
        if at is None or at < since or not is_maintainer(comment, maintainers):
            continue
        digest = hashlib.sha256(f"{comment.author}\x1f{comment.created_at}\x1f{comment.body[:500]}".encode()).hexdigest()
        found.append((f"c:{digest[:16]}", comment))
    closed = _time(issue.closed_at)
    if issue.state == "closed" and closed is not None and closed >= since:
        found.append((f"closed:{issue.closed_at}", None))
    return found


def followup_text(issue: StoredIssue, product: str, replies: list[IssueComment], closed: bool, language: str,
                  redact: Callable[[str], str]) -> str:
    """A short notice in the thread's language: the newest maintainer reply (quoted, unchecked) and/or the close."""
    zh = language == "zh"
    lines: list[str] = []
    if replies:
        newest = replies[-1]
        who = sanitize_quote(newest.author, redact) or "?"
        more = len(replies) - 1
        if zh:
            lines.append(f"上报到 {product} 的问题有了回复：维护者 {who} 在 {issue.url} 中写道"
                         + (f"（另有 {more} 条维护者回复）" if more else "") + "：")
        else:
            lines.append(f"Upstream replied on the issue taken to {product}: maintainer {who} wrote on {issue.url}"
                         + (f" (and {more} more maintainer repl{'y' if more == 1 else 'ies'})" if more else "") + ":")
        lines.append("> " + (sanitize_quote(newest.body, redact) or ("（无文字）" if zh else "(no text)")))
        lines.append("（引自该 issue，未经核实；详情请打开链接。）" if zh
                     else "(Quoted from the issue, not checked by me; open it for the whole thread.)")
    if closed:
        lines.append(f"该 issue 已关闭：{issue.url}" if zh else f"The issue was closed: {issue.url}")
    return "\n".join(lines)


def _claim_key(keys: Keys, tracked: Tracked, issue_number: int, event: str) -> str:
    where = hashlib.sha256(f"{tracked.scope}\x1f{tracked.record.channel}\x1f{tracked.record.thread}".encode()).hexdigest()[:16]
    return f"{keys.prefix}:followup:{where}:{tracked.record.question_id}:{tracked.record.repo}#{issue_number}:{event}"


def _bind_key(keys: Keys, tracked: Tracked) -> str:
    where = hashlib.sha256(f"{tracked.scope}\x1f{tracked.record.channel}\x1f{tracked.record.thread}".encode()).hexdigest()[:16]
    return f"{keys.prefix}:followup:{where}:{tracked.record.question_id}:{tracked.record.repo}:issue"


def filed_number(tracked: Tracked) -> int | None:
    """The issue number of a filed escalation, when its URL is an issue of the repository's own tracker."""
    url, page = tracked.filed_url, tracked.record.issues_page.rstrip("/") + "/"
    if not url.startswith(page) or not page.startswith(("https://github.com/", "https://gitcode.com/")):
        return None
    rest = url[len(page):]
    return int(rest) if rest.isdigit() else None


async def tracked_escalations(log_: EscalationLog, scopes: Sequence[str], now: float) -> list[Tracked]:
    """Every escalation of the opted-in `scopes` still kept, one per question, thread and repository."""
    grouped: dict[tuple[str, str, str, str, str], list[EscalationRecord]] = defaultdict(list)
    for scope in scopes:
        for record in await log_.read(scope, 0, now, now=now):
            grouped[(scope, record.channel, record.thread, record.repo, record.question_id)].append(record)
    tracked = []
    for (scope, *_), records in grouped.items():
        if any(f"{r.platform}:{r.workspace}" != scope for r in records):
            continue  # never posted outside the workspace whose log holds it
        filed = next((r.url for r in reversed(records) if r.state == "filed"), "")
        tracked.append(Tracked(scope, records[-1], min(r.at for r in records), filed))
    return tracked


class Followups:
    def __init__(self, settings: Any, redis: Redis, keys: Keys, poster: Poster, *, now: float | None = None) -> None:
        self._settings = settings
        self._redis = redis
        self._keys = keys
        self._poster = poster
        self._now = time.time() if now is None else now
        self._redact = Redactor.from_settings(settings)
        self._journal = EscalationLog(redis, keys, LogLimits.from_settings(settings), self._redact)

    async def run(self) -> FollowupOutcome:
        outcome = FollowupOutcome()
        scopes = sorted(set(self._settings.escalation_followup_workspaces))
        if not scopes:
            return outcome
        tracked = await tracked_escalations(self._journal, scopes, self._now)
        outcome.watched = len(tracked)
        by_repo: dict[str, list[Tracked]] = defaultdict(list)
        for item in tracked:
            by_repo[item.record.repo].append(item)
        for repo, items in sorted(by_repo.items()):
            for item, issue in await self._issues(repo, items):
                await self._follow(item, issue, outcome)
        return outcome

    async def _issues(self, repo: str, items: list[Tracked]) -> list[tuple[Tracked, StoredIssue]]:
        """Each escalation with its stored issue (those with none yet are left for a later sync)."""
        numbers: dict[Tracked, int] = {}
        unbound: dict[str, list[Tracked]] = defaultdict(list)
        for item in items:
            number = filed_number(item)
            if number is None:
                stored = await self._redis.get(_bind_key(self._keys, item))
                number = int(stored) if stored is not None and stored.isdigit() else None
            if number is not None:
                numbers[item] = number
            elif item.record.state == "opened":
                unbound[item.record.question_id].append(item)
        found: dict[int, StoredIssue] = {}
        candidates: dict[Tracked, StoredIssue] = {}
        wanted = set(numbers.values())
        for issue in iter_issues(self._settings.data_dir, repo):
            if issue.number in wanted:
                found[issue.number] = issue
            if unbound and issue.kind == "issue":
                match = _REF.search(issue.body[:REF_SCAN_CHARS])
                created = _time(issue.created_at)
                for item in unbound.get(match.group(1), []) if match else ():
                    # filed from the link after the escalation; the earliest such issue is the one
                    if created is not None and created >= item.escalated_at - 60 and (
                            item not in candidates or issue.number < candidates[item].number):
                        candidates[item] = issue
        for item, issue in candidates.items():
            # bound for good: a later issue copying the marker does not take the thread over
            await self._redis.set(_bind_key(self._keys, item), issue.number, nx=True, ex=CLAIM_DAYS * 86_400)
            stored = await self._redis.get(_bind_key(self._keys, item))
            if stored is not None and int(stored) == issue.number:
                numbers[item] = issue.number
                found[issue.number] = issue
            elif stored is not None:
                numbers[item] = int(stored)  # another sync bound it first: read that one next time
        return [(item, found[n]) for item, n in numbers.items() if n in found]

    async def _follow(self, item: Tracked, issue: StoredIssue, outcome: FollowupOutcome) -> None:
        events = events_after(issue, item.escalated_at, self._settings.maintainers_for(item.record.repo))
        claimed: list[tuple[str, IssueComment | None]] = []
        for event, comment in events:
            key = _claim_key(self._keys, item, issue.number, event)
            if await self._redis.set(key, "1", nx=True, ex=CLAIM_DAYS * 86_400):
                claimed.append((event, comment))
        if not claimed:
            return
        replies = [c for _, c in claimed if c is not None]
        closed = any(c is None for _, c in claimed)
        record = item.record
        text = followup_text(issue, record.product, replies, closed, record.language or "en", self._redact)
        place = Place(record.platform, record.workspace, record.channel, record.thread, dict(record.place))
        delivery = "followup-" + hashlib.sha256(
            "\x1f".join(_claim_key(self._keys, item, issue.number, e) for e, _ in claimed).encode()).hexdigest()[:32]
        try:
            await self._poster.post(place, text, "zh" if record.language == "zh" else "en", delivery)
            outcome.posted += 1
        except NotPosted as exc:
            # released: the next sync tries again (the delivery record keeps a partial post from repeating)
            await self._redis.delete(*(_claim_key(self._keys, item, issue.number, e) for e, _ in claimed))
            outcome.failed.append(f"{item.scope} {record.repo}#{issue.number}: not posted: {exc}")
            return
        try:  # the report and the digest show it: answered upstream, or closed
            await self._journal.progressed(record, "closed" if issue.state == "closed" else "answered", issue.url,
                                           self._now)
        except (RedisError, OSError) as exc:
            log.warning("could not store an escalation's new state: %s", type(exc).__name__)


async def run_followups(settings: Any, say: Callable[[str], None] = print, *, now: float | None = None) -> bool:
    """After an issue sync: post what upstream said into the opted-in escalated threads. False when
    something could not be posted (it is tried again on the next sync)."""
    if not settings.escalation_followup_workspaces:
        return True
    malformed = [s for s in settings.escalation_followup_workspaces if not all(s.partition(":")[::2])]
    if malformed:
        say(f"escalation follow-up: ESCALATION_FOLLOWUP_WORKSPACES entries are platform:workspace, not {malformed[0]!r}")
        return False
    if not settings.redis_url:
        say("escalation follow-up: skipped: set REDIS_URL to the Redis the bot uses (the escalations live there)")
        return False
    import redis.asyncio as aioredis  # noqa: PLC0415

    redis = aioredis.Redis.from_url(settings.redis_url)
    try:
        async with Poster(settings, redis) as poster:
            outcome = await Followups(settings, redis, Keys(settings.redis_prefix), poster, now=now).run()
    except (RedisError, OSError) as exc:
        say(f"escalation follow-up: cannot read Redis ({type(exc).__name__})")
        return False
    finally:
        await redis.aclose()
    say(outcome.line())
    return not outcome.failed
