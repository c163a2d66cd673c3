"""Resolution records from stored threads, without a model.

For each thread: the role of every commenter (maintainer, reporter, user), the comment that
decides it (a maintainer's fix, else the reporter's own workaround, else someone else's), whether
the reporter confirmed it afterwards, the technical items in it, the pull requests named as the
fix, a duplicate's original, and the error signatures of the report. Then pull requests are
linked to the issues they close ("Fixes #N").

Maintainers: GitHub says so in author_association. GitCode does not, so there a maintainer is a
login listed in ISSUES_MAINTAINERS for the repository (or for every repository), or someone who
commented on at least MIN_THREADS threads of the repository that they did not open: people who
answer many reporters are the project's; reporters comment on their own threads.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import replace

from core.issue_store import IssueComment, StoredIssue
from core.resolution import links
from core.resolution.focus import focus
from core.resolution.record import Certainty, Resolution, Role
from core.resolution.untrusted import plain_sentence

MAINTAINER_ROLES = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
MIN_THREADS = 3
SUMMARY_CHARS = 280
MAX_ITEMS = 6
MIN_FIX_SCORE = 2  # a fix word and a named item, or two fix words; a question back scores below

# Words that say a comment resolves something, in both languages.
_FIX_CUES = re.compile(
    r"(?i)\b(?:fix\w{0,4}|solv\w{0,4}|resolv\w{0,4}|work(?:s|ed)? (?:now|fine|well)|upgrad\w{0,4}|downgrad\w{0,4}|"
    r"(?:re)?install\w{0,4}|set|setting|use[ds]?|using|try|switch\w{0,4}|remov\w{0,4}|disabl\w{0,4}|enabl\w{0,4}|add\w{0,4}|"
    r"should|need(?:s)? to|must|instead|workaround|recommend\w{0,4}|suggest\w{0,4}|follow\w{0,4}|refer to|default\w{0,2}|"
    r"not (?:yet )?supported|unsupported|support\w{0,4}|duplicate|root cause|caused by|because|due to|expected|limitation|known issue|"
    r"release[ds]?|version|landed|merged|tutorial|guide)\b"
    r"|修复|解决|升级|降级|安装|设置|使用|改为|改用|换用|换成|不支持|已支持|支持|原因|导致|版本|发布|合入|规避|重复|建议|需要|参考|默认|应该"
)
_ASKING = re.compile(
    r"(?i)\b(?:could you|can you|would you|please (?:share|provide|post|paste|send|attach|try to reproduce)|any update|what is your|"
    r"which version|have you tried|let (?:me|us) know)\b|请提供|能否提供|麻烦提供|请问|是否可以提供"
)
_CONFIRM = re.compile(
    r"(?i)\b(?:it works|works now|work now|working now|solved|resolved|fixed|that worked|this worked|worked for me|thanks?,? it|"
    r"thank you,? it|problem (?:is )?gone|success(?:fully)?)\b|已解决|解决了|可以了|好了|成功了|没问题了|生效了"
)
_OWN_FIX = re.compile(
    r"(?i)\b(?:solved|fixed|resolved|got it working|found the (?:cause|problem|issue)|the (?:cause|problem|issue) was|turns out|"
    r"it was because|after (?:upgrading|downgrading|installing|setting|removing|switching)|by (?:upgrading|downgrading|installing|setting|"
    r"removing|switching|using))\b|原因是|解决方法|解决办法|通过.{0,20}解决|后解决|问题解决"
)
_LEADING_MENTIONS = re.compile(r"^(?:@\u2060?[\w.\-]{1,40}[\s,:，：]{0,3})+")
_CODE_SPAN = re.compile(r"`([^`\n]{2,120})`")
_COMMAND = re.compile(r"(?i)\b(?:pip3? install|pip3? uninstall|export|vllm serve|python3? -m|git checkout|apt(?:-get)? install|source)\s[^\n;`]{1,120}")
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9\-]{1,50}(?:[= ](?:[\w.\-:/\"{}]{1,60}))?")
_ENV = re.compile(r"(?<![\w])[A-Z][A-Z0-9]{1,20}(?:_[A-Z0-9]{1,20}){1,6}(?:=[\w.\-:/,]{1,80})?(?![\w])")
_PINNED = re.compile(r"(?i)(?<![\w.-])([a-z][a-z0-9_\-]{1,40})\s{0,2}(==|>=|<=|<|>|~=)\s{0,2}(\d{1,4}(?:\.[0-9a-z]{1,6}){0,4})")
_VERSION = re.compile(r"(?i)(?<![\w.])v?\d{1,3}\.\d{1,3}(?:\.\d{1,4})?(?:rc\d{1,3}|\.post\d{1,3}|\.dev\d{1,6})?(?![\w.])")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?;])\s{1,4}|(?<=[。！？；])")  # "numpy<2.0" is not two sentences


def role_of(comment: IssueComment, issue: StoredIssue, maintainers: frozenset[str]) -> Role:
    if comment.association.upper() in MAINTAINER_ROLES or (comment.author and comment.author in maintainers):
        return "maintainer"
    if comment.author and comment.author == issue.author:
        return "reporter"
    return "user"


def maintainers_of(issues: Iterable[StoredIssue], configured: Iterable[str] = ()) -> frozenset[str]:
    """Listed logins, those the host labels a maintainer in any thread of the repository (so a thread
    they open is known as theirs: the host labels comments, not openers), and, where the host gives
    no association, those answering at least MIN_THREADS threads they did not open."""
    seen: Counter[str] = Counter()
    labelled: set[str] = set()
    for issue in issues:
        labelled.update(c.author for c in issue.comments if c.author and c.association.upper() in MAINTAINER_ROLES)
        # Only where the host gave no association (GitCode, imports): GitHub's word is final.
        unlabelled = {c.author for c in issue.comments if not c.association}
        for login in unlabelled - {issue.author, "", "?", "ghost"}:
            seen[login] += 1
    busy = {login for login, n in seen.items() if n >= MIN_THREADS and not login.endswith("[bot]")}
    return frozenset(configured) | busy | labelled


def fix_items(text: str) -> tuple[str, ...]:
    """Commands, pinned versions, flags and env vars a comment names (its own words, no links)."""
    items: list[str] = []

    def add(item: str) -> None:
        item = item.strip().rstrip(".,;:)")
        if item and "://" not in item and not any(item in kept for kept in items) and len(items) < MAX_ITEMS:
            items.append(item)

    for span in _CODE_SPAN.findall(text):
        add(span)
    for pattern in (_COMMAND, _PINNED, _ENV, _FLAG):
        for match in pattern.finditer(text):
            add(match.group(0))
    return tuple(items)


def _outside_code(body: str) -> str:
    """The comment without fenced blocks and quoted lines (a quote repeats the reporter)."""
    out, fenced = [], False
    for line in body.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith(">"):
            continue
        out.append(line)
    return "\n".join(out)


def _only_questions(text: str) -> bool:
    """Every sentence asks something ("Any progress? Is it fixed in a newer release?"): no answer in it."""
    sentences = [s.strip() for part in text.splitlines() for s in _SENTENCE_SPLIT.split(part) if s.strip()]
    return bool(sentences) and all(s.endswith(("?", "？")) for s in sentences)


def _candidate(comment: IssueComment) -> bool:
    """A comment that could hold a resolution: not a bot account's, not only questions. (A maintainer's
    "(auto reply)" stays a candidate: such replies often carry the project's standing workaround.)"""
    text = _outside_code(comment.body).strip()
    return bool(text) and not comment.author.endswith("[bot]") and not _only_questions(text)


def _score(body: str) -> int:
    text = _outside_code(body)
    score = 2 * min(3, len(_FIX_CUES.findall(text))) + min(3, len(fix_items(text)))
    score += 2 * bool(links.fixed_by(body)) + 2 * bool(links.duplicate_of(text))
    if _ASKING.search(text):
        score -= 3
    return score


def summary_of(body: str, limit: int = SUMMARY_CHARS) -> str:
    """The comment's most telling one or two sentences, as plain text."""
    text = _outside_code(body)
    sentences = [_LIST_MARK.sub("", s).strip() for part in text.splitlines() for s in _SENTENCE_SPLIT.split(part) if s.strip()]
    sentences = [s for s in sentences if s]
    if not sentences:
        return ""
    ranked = sorted(range(len(sentences)), key=lambda i: (-_sentence_score(sentences[i]), i))
    chosen = sorted(ranked[:2])
    out = ""
    for i in chosen:
        # "@someone Fixed in …": the name says nothing; "**bold**" would only show as look-alike stars.
        piece = _LEADING_MENTIONS.sub("", plain_sentence(sentences[i].replace("**", "")))
        if not piece:
            continue
        if out and len(out) + len(piece) + 1 > limit:
            break
        out = f"{out} {piece}".strip()
    return out[:limit].rstrip() + ("…" if len(out) > limit else "")


_LIST_MARK = re.compile(r"^\s{0,8}(?:[-*+]|\d{1,2}[.)])\s{1,4}")


def _sentence_score(sentence: str) -> int:
    """Fix words and named items count; a question back ("does it work now?") and a bare label
    ("Workaround:") do not say what to do."""
    score = 2 * len(_FIX_CUES.findall(sentence)) + len(fix_items(sentence))
    if _ASKING.search(sentence) or sentence.rstrip().endswith(("?", "？")):
        score -= 4
    if len(_LIST_MARK.sub("", sentence).strip()) < 25 and not fix_items(sentence):
        score -= 3
    return score


_FIX_HEADING = re.compile(r"(?im)^\s{0,4}(?:#{1,4}\s{0,2})?\**(?:fix|fixed by|workaround|solution|resolution|解决方法|解决办法|规避方法|修复方法)\**\s{0,2}[:：]")


def _fix_in_body(body: str) -> str:
    """A reporter's own fix written into the report under a "Fix:" / "Workaround:" heading."""
    match = _FIX_HEADING.search(body[:20_000])
    if match is None:
        return ""
    lines = [ln.strip() for ln in body[match.start():].splitlines() if ln.strip() and not ln.strip().startswith("```")][:3]
    text = " ".join(lines)
    return text if fix_items(text) else ""


# "The problem was not …", "still fails": a report that its own attempt did not work.
_NOT_FIXED = re.compile(r"(?i)(?:\bnot|n't|\bnever|\bstill)\s{1,3}(?:\w{1,12}\s{1,3}){0,2}(?:solv|fix|resolv|work)|仍然|还是不行|没有?解决|无效")


def _own_fix(body: str) -> bool:
    """The reporter says what the problem was or what solved it ("the problem was in my script;
    following the guide works"), without a flag or command to name."""
    text = _outside_code(body)
    return bool(_OWN_FIX.search(text)) and not _NOT_FIXED.search(text)


_CALLOUT = re.compile(r"^\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s{0,4}", re.IGNORECASE)


def _author_text(body: str) -> str:
    """A thread opener's own text: fences dropped, but their callouts kept ("> [!NOTE] needs X" in a
    guide is the author's point, not a quote of someone else)."""
    out, fenced = [], False
    for line in body.splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(_CALLOUT.sub("", line.lstrip().lstrip(">").strip()))
    return "\n".join(out)


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _day(timestamp: str) -> str:
    """The day of an ISO 8601 time ("2025-08-19T02:11:05Z" → "2025-08-19"); "" when it is not one."""
    found = _DAY.match(timestamp or "")
    return found.group(0) if found else ""


def _maintainers_own_thread(base: Resolution, issue: StoredIssue) -> Resolution:
    """A thread a maintainer opened (a guide, a how-to, a known-issue note) says what it says in its
    body. Closed, it is their word on the matter; open, it is still a plan, so it ranks below a
    reporter's workaround and never leads or stands in for a resolution."""
    text = _author_text(issue.body[:20_000])
    summary = summary_of(text)
    if not summary:
        return replace(base, certainty=Certainty.CLOSED if issue.state == "closed" else Certainty.NONE)
    closed = issue.state == "closed"
    return replace(base, certainty=Certainty.MAINTAINER if closed else Certainty.OTHER, said_by="maintainer",
                   author=issue.author, summary=summary, fix_items=fix_items(text), said_at=_day(issue.created_at))


def _confirmed_by_another(roles: list[tuple[IssueComment, Role]], index: int) -> bool:
    """Someone other than the comment's author says it works, later in the thread."""
    author = roles[index][0].author
    return any(c.author != author and _CONFIRM.search(c.body) and not _ASKING.search(c.body) and not _only_questions(c.body)
               for c, _ in roles[index + 1:])


def extract(issue: StoredIssue, maintainers: frozenset[str]) -> Resolution:
    """One thread's record; pull requests keep what they fix."""
    report = focus(f"{issue.title}\n{issue.body}")
    base = Resolution(
        repo=issue.repo, number=issue.number, url=issue.url, title=plain_sentence(issue.title)[:200], state=issue.state,
        kind=issue.kind, signatures=tuple(e.signature for e in report.errors), error_line=report.keyed_on[:300],
        merged=issue.merged,
    )
    if issue.is_pull:
        # A merged pull request is itself a maintainer's resolution: its title says what changed.
        return replace(base, fixes=links.fixes(f"{issue.title}\n{issue.body}", issue.repo), said_at=_day(issue.closed_at or ""),
                       certainty=Certainty.MAINTAINER if issue.merged else Certainty.NONE,
                       said_by="maintainer" if issue.merged else "none", summary=base.title if issue.merged else "")
    roles = [(c, role_of(c, issue, maintainers)) for c in issue.comments]
    maint = [(i, c) for i, (c, r) in enumerate(roles) if r == "maintainer" and _candidate(c)]
    best = max(maint, key=lambda ic: (_score(ic[1].body), ic[0]), default=None)
    said_by: Role = "none"
    chosen: tuple[int, IssueComment] | None = None
    if best is not None and _score(best[1].body) >= MIN_FIX_SCORE:
        chosen, said_by = best, "maintainer"
    else:
        for wanted in ("reporter", "user"):
            # The reporter's own words, or someone else's: the best-scoring one that names something.
            # Named items, or another person's "works now" after it: a workaround someone else
            # confirmed needs no flag to be worth leading with.
            hits = [(_score(c.body), i, c) for i, (c, r) in enumerate(roles)
                    if r == wanted and _candidate(c)
                    and (fix_items(c.body) or _confirmed_by_another(roles, i) or (wanted == "reporter" and _own_fix(c.body)))]
            hits = [h for h in hits if h[0] >= MIN_FIX_SCORE or (wanted == "reporter" and _OWN_FIX.search(_outside_code(h[2].body)))]
            if hits:
                _, index_, comment_ = max(hits, key=lambda h: (h[0], h[1]))
                chosen, said_by = (index_, comment_), wanted  # type: ignore[assignment]
                break
        if chosen is None:
            in_body = _fix_in_body(issue.body)
            if in_body:  # "Fix: export …" written into the report itself
                chosen, said_by = (-1, IssueComment(issue.author, "", in_body, issue.created_at)), "reporter"
    if chosen is None and issue.author and issue.author in maintainers:
        return _maintainers_own_thread(base, issue)
    if chosen is None:
        return replace(base, certainty=Certainty.CLOSED if issue.state == "closed" else Certainty.NONE)
    index, comment = chosen
    body = _outside_code(comment.body)
    confirmed = said_by == "maintainer" and any(
        r == "reporter" and _CONFIRM.search(c.body) and not _ASKING.search(c.body) for c, r in roles[index + 1:]
    )
    certainty = {"maintainer": Certainty.CONFIRMED if confirmed else Certainty.MAINTAINER,
                 "reporter": Certainty.REPORTER, "user": Certainty.OTHER}[said_by]
    return replace(
        base, certainty=certainty, said_by=said_by, author=comment.author, summary=summary_of(comment.body),
        said_at=_day(comment.created_at or issue.closed_at or ""),
        fix_items=fix_items(body), fixed_by=links.fixed_by(comment.body, issue.repo), duplicate_of=links.duplicate_of(body), confirmed=confirmed,
    )


def link_pull_requests(records: Mapping[int, Resolution]) -> dict[int, Resolution]:
    """Each issue learns the merged pull requests that close it (merged ones first in fixed_by)."""
    out = dict(records)
    for pr in records.values():
        if pr.kind != "pull" or not pr.merged:
            continue
        for number in pr.fixes:
            issue = out.get(number)
            if issue is None or issue.kind != "issue":
                continue
            fixed_by = (pr.number, *(n for n in issue.fixed_by if n != pr.number))
            certainty = max(issue.certainty, Certainty.MAINTAINER)
            out[number] = replace(issue, fixed_by=fixed_by, closed_by=(*issue.closed_by, pr.number), certainty=certainty,
                                  said_by=issue.said_by if issue.said_by != "none" else "maintainer")
    return out


def extract_repository(issues: Iterable[StoredIssue], configured_maintainers: Iterable[str] = ()) -> dict[int, Resolution]:
    threads = list(issues)
    maintainers = maintainers_of(threads, configured_maintainers)
    return link_pull_requests({t.number: extract(t, maintainers) for t in threads})
