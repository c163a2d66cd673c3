"""Which resolved thread answers a question, and the 1–3 lines an offline answer leads with.

A thread matches with confidence when the question's decisive error line has the thread's
signature, or when the knowledge index ranks the thread near the top and the two share specific
technical words (an identifier, a flag, an error code), not only prose. The lead names what fixed
it, who said so, the release, and the line the question was keyed on; the link goes into the
answer's sources, built from the repository and number, never from thread text.
"""
from __future__ import annotations

import re

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from core.index.passage import Passage
from core.messages import Language, Source
from core.resolution.focus import LogFocus
from core.resolution.memory import ResolutionMemory
from core.resolution.record import Certainty, Resolution
from core.resolution.words import specific_words

Via = Literal["signature", "search"]
SEARCH_RANK = 3  # issue passages asked for: the top one may lead, the next tells how far ahead it is
MIN_SHARED = 2  # specific words a thread must share with a question to settle its product
# Tuned on eval/real_issues_dev.jsonl: the right thread is usually first by a wide margin.
MIN_LEAD_RATIO = 1.4  # the top thread's score over the runner-up's
MIN_RARITY = 8.0  # summed inverse thread frequency of the specific words it shares with the question
MIN_TIE_RATIO = 1.15  # below this the top two are a tie: neither leads
MIN_MESSAGE = 12  # characters of an exception's normalised message before its signature may lead

@dataclass(frozen=True)
class Match:
    record: Resolution
    via: Via
    keyed_on: str  # the question's line the match rests on ("" for a search match)
    seen: int  # reports of the same signature in these repositories
    resolved_alike: int  # of them, how many are resolved
    original: Resolution | None = None  # a duplicate's resolved original


def find(memory: ResolutionMemory, focus: LogFocus, repos: Sequence[str], issue_passages: Sequence[Passage]) -> Match | None:
    """The best resolved thread for the question, or None when nothing matches with confidence."""
    scoped = tuple(repos)
    for error in focus.errors:
        if error.kind == "code" and not focus.errors[0].kind == "code":
            continue  # an error code alone is shared by unrelated failures; it leads only when it is all there is
        if error.kind == "exception" and len(error.signature.partition(": ")[2]) < MIN_MESSAGE:
            continue  # "NotImplementedError" or "KeyError: <n>" alone says too little
        reports = memory.with_signature(error.signature, scoped)
        resolved = [r for r in reports if r.resolved]
        if resolved:
            best = max(resolved, key=lambda r: (r.certainty, bool(r.release), r.number))
            return Match(best, "signature", error.line, len(reports), len(resolved), memory.original_of(best))
    if not issue_passages:
        return None
    # Only the top thread may lead, and only when it stands out: clearly ahead of the next one, or
    # sharing rare identifiers with the question (weighted by how few threads carry them).
    top = issue_passages[0]
    record = record_of(memory, top)
    # Another user's workaround leads only on the same error signature (above), never on words alone.
    if record is None or not record.resolved or record.certainty < Certainty.REPORTER:
        return None
    ratio, weight = _standing(memory, focus, issue_passages, record.title)
    if ratio >= MIN_LEAD_RATIO or (weight >= MIN_RARITY and ratio >= MIN_TIE_RATIO):
        return Match(record, "search", "", 0, 0, memory.original_of(record))
    return None


def _standing(memory: ResolutionMemory, focus: LogFocus, passages: Sequence[Passage], title: str = "") -> tuple[float, float]:
    """How far the top thread is ahead of the next (score ratio) and how rare the specific words
    it shares with the question are (summed inverse thread frequency)."""
    top = passages[0]
    runner_up = passages[1].score if len(passages) > 1 else 0.0
    # A lone hit stands out from nothing: it needs the shared rare words.
    ratio = top.score / runner_up if runner_up > 0 else MIN_TIE_RATIO
    return ratio, memory.rarity(specific_words(focus.query()) & specific_words(top.text + "\n" + title))


def rare_thread_repo(memory: ResolutionMemory, focus: LogFocus, issue_passages: Sequence[Passage]) -> str:
    """The repository of a top thread sharing rare identifiers with the question (resolved or not):
    strong enough to overrule a decline, since an out-of-scope question does not share them."""
    if not issue_passages:
        return ""
    ratio, weight = _standing(memory, focus, issue_passages)
    return issue_passages[0].repo if weight >= MIN_RARITY and ratio >= MIN_TIE_RATIO else ""


def deciding_repo(memory: ResolutionMemory, focus: LogFocus, issue_passages: Sequence[Passage]) -> str:
    """The repository whose threads a question belongs with, resolved or not: the same error
    signature, or the top-ranked thread sharing specific words. "" when nothing decides."""
    for error in focus.errors:
        if error.kind != "exception":
            continue
        repos = {r.repo for r in memory.with_signature(error.signature)}
        if len(repos) == 1:
            return repos.pop()
    asked = specific_words(focus.query())
    for passage in issue_passages[:1]:
        if len(asked & specific_words(passage.text)) >= MIN_SHARED:
            return passage.repo
    return ""


VOCABULARY_K = 5  # passages whose repositories vote
VOCABULARY_MAJORITY = 5  # votes one repository needs (all of them): the biggest index wins near-ties by size alone


def dominant_repo(passages: Sequence[Passage]) -> str:
    """The repository whose own text (docs, code, threads) holds nearly all the best passages: the
    words of the question are that repository's vocabulary. "" when they spread."""
    votes = Counter(p.repo for p in passages[:VOCABULARY_K])
    repo, count = votes.most_common(1)[0] if votes else ("", 0)
    return repo if count >= VOCABULARY_MAJORITY else ""


def record_of(memory: ResolutionMemory, passage: Passage) -> Resolution | None:
    kind, _, number = passage.path.partition("/")
    if kind not in ("issues", "pulls") or not number.isdigit():
        return None
    return memory.get(passage.repo, int(number))


WHO = {  # who said a resolution, as answers and tool output name them
    "en": {"maintainer": "a maintainer", "reporter": "the reporter", "user": "another user (not a maintainer)"},
    "zh": {"maintainer": "维护者", "reporter": "提问者本人", "user": "其他用户（非维护者）"},
}
_T = {
    "en": {
        "lead": "**Resolved before** ({where}, {who}{confirmed}):",
        "pull_lead": "**Merged pull request** ({where}):",
        "confirmed": ", confirmed by the reporter",
        "fixed_in": "Fixed in {release} by #{pr}.",
        "released_in": "First released in {release}.",
        "named_in": "Pull request named in the thread: #{pr}",
        "named_release": ", first in {release}.",
        "fixed_by": "Fixed by #{pr} (not yet in a release tag of the clone).",
        "duplicate": "Marked as a duplicate of #{n}, resolved there:",
        "keyed": "Keyed on `{line}`{seen}.",
        "seen": ": seen in {n} {repo} thread(s), {k} resolved",
        "pull": "pull request",
        "there": "Resolved there ({who}{confirmed}):",
        "as_of": "(said on {day}; support may have come since: check the current supported-models table and release notes)",
        "as_of_unknown": "(an earlier statement; support may have come since: check the current supported-models table and release notes)",
    },
    "zh": {
        "lead": "**已有解决记录**（{where}，{who}{confirmed}）：",
        "pull_lead": "**已合入的 PR**（{where}）：",
        "confirmed": "，提问者确认有效",
        "fixed_in": "已在 {release} 修复（#{pr}）。",
        "released_in": "首次发布于 {release}。",
        "named_in": "帖子中提到的 PR：#{pr}",
        "named_release": "，首次发布于 {release}。",
        "fixed_by": "由 #{pr} 修复（本地克隆中尚无包含它的发布标签）。",
        "duplicate": "该问题被标为 #{n} 的重复，#{n} 的解决方式：",
        "keyed": "依据日志行 `{line}`{seen}。",
        "seen": "：在 {n} 个 {repo} 帖子中出现，{k} 个已解决",
        "pull": "PR",
        "there": "该帖的解决方式（{who}{confirmed}）：",
        "as_of": "（这是 {day} 的说法；之后可能已支持，请以当前的支持模型表和发布说明为准）",
        "as_of_unknown": "（这是较早的说法；之后可能已支持，请以当前的支持模型表和发布说明为准）",
    },
}


# How each lead paragraph starts: the research prompt files these under untrusted quoted text.
LEAD_PREFIXES = tuple(t[key].split("(", 1)[0].split("（", 1)[0] for t in _T.values() for key in ("lead", "pull_lead"))


def _where(record: Resolution, t: dict[str, str]) -> str:
    name = record.repo.split("/", 1)[-1]
    return f"{name} {t['pull'] + ' ' if record.kind == 'pull' else ''}#{record.number}"


# "Not supported (yet)", "no plan": a maintainer's word on support is true as of the day it was said.
_DENIES_SUPPORT = re.compile(
    r"not (?:yet )?supported|no plan|(?:does not|doesn't|do not|don't|cannot|can't) support|"
    r"暂不支持|不支持|没有计划|暂无计划|暂时没有",
    re.IGNORECASE,
)


def _as_of(record: Resolution, t: dict[str, str]) -> str:
    """The day a "not supported" was said (judges read an old "no plan to support it" as today's answer)."""
    if not _DENIES_SUPPORT.search(record.summary):
        return ""
    return t["as_of"].format(day=record.said_at) if record.said_at else t["as_of_unknown"]


def _fix_line(record: Resolution, t: dict[str, str]) -> str:
    """Which pull request fixed it and the first release that has it, when the record knows."""
    if record.kind == "pull" and record.release:
        return t["released_in"].format(release=record.release)
    if record.closed_by:  # a merged pull request says it closes this thread
        pr = record.closed_by[0]
        return t["fixed_in"].format(release=record.release, pr=pr) if record.release else t["fixed_by"].format(pr=pr)
    if record.fixed_by:  # only named in a comment: a pointer, not a claim that it fixed this
        named = t["named_in"].format(pr=record.fixed_by[0])
        return named + (t["named_release"].format(release=record.release) if record.release else "")
    return ""


def thread_outcome(record: Resolution, language: Language, question: str = "", passage_text: str = "") -> str:
    """One line for a related thread that did not lead: how it was resolved and by whom, or "" when
    it was not, or when the thread shares no specific word with the question (then it is only alike
    in words: its fix stated next to the question would read as this question's fix, so the excerpt
    stays). Shown in place of an excerpt, since a thread's outcome is what a reader looks for."""
    # Someone else's comment in an unled thread is as often a "me too" with a log as a fix: the excerpt shows it.
    if not record.resolved or record.kind == "pull" or record.certainty < Certainty.REPORTER:
        return ""
    if question and not specific_words(question) & specific_words(f"{record.title}\n{passage_text}"):
        return ""
    t, who = _T[language], WHO[language]
    head = t["there"].format(who=who.get(record.said_by, who["user"]), confirmed=t["confirmed"] if record.confirmed else "")
    return " ".join(part for part in (head, record.summary, _as_of(record, t), _fix_line(record, t)) if part)


def lead(match: Match, language: Language) -> tuple[str, list[Source]]:
    """The lines an offline answer starts with, and the threads they cite."""
    t, who = _T[language], WHO[language]
    record = match.record
    shown = match.original or record
    lines: list[str] = []
    if shown.kind == "pull":
        head = t["pull_lead"].format(where=_where(shown, t))
    else:
        head = t["lead"].format(where=_where(record, t), who=who.get(shown.said_by, who["user"]),
                                confirmed=t["confirmed"] if shown.confirmed else "")
    if match.original is not None:
        head += " " + t["duplicate"].format(n=shown.number)
    body = " ".join(part for part in (shown.summary, _as_of(shown, t)) if part)
    lines.append(f"{head} {body}".strip())
    fix = _fix_line(shown, t)
    if fix:
        lines.append(fix)
    if match.keyed_on:
        seen = t["seen"].format(n=match.seen, repo=record.repo.split("/", 1)[-1], k=match.resolved_alike) if match.seen > 1 else ""
        lines.append(t["keyed"].format(line=_code_safe(match.keyed_on), seen=seen))
    sources = [Source(title=f"{record.repo}#{record.number}", url=record.url)]
    if match.original is not None:
        sources.append(Source(title=f"{shown.repo}#{shown.number}", url=shown.url))
    return "\n".join(lines), sources


def _code_safe(line: str) -> str:
    return line.replace("`", "'")[:160]
