"""Taking a thread's question upstream: a pre-filled new issue in the product's own forge.

`escalate` / `提交问题` in a thread (or the Escalate button, which sends `ESCALATE_CHOICE`) builds
one issue draft from what the thread already holds: the user's question, the environment read from
the thread, the failing command and the decisive log lines (core/resolution/focus.py), and the
sources the last answer checked. Everything goes through the project's redactor (configured
secrets, credentials in URLs, token shapes) and mentions are defanged, so a token pasted into a
log or an `@someone` in a question never reaches a public issue.

Where the issue goes is the knowledge base's `issue_tracker` (core/knowledge/repositories.json):
GitHub for vLLM, vllm-ascend and SGLang, GitCode for MindIE-* and msModelSlim.

- GitHub: `https://github.com/<owner>/<name>/issues/new?title=…&body=…&labels=…` (documented query
  parameters; labels apply only for people allowed to set them). GitHub answers 414 for very long
  URLs, so the whole URL is kept under `MAX_URL_CHARS` and a cut body says "(trimmed)".
- GitCode: its new-issue page is `https://gitcode.com/<owner>/<name>/issues/create`. GitCode
  documents no pre-fill parameters (its help pages cover issue templates and the REST API only);
  public code opens `…/issues/create?title=…&body=…` on GitCode/AtomGit (openGauss docs' feedback
  button), so the URL carries both, and the reply also gives the title and the body to paste in
  case the page ignores them.

With `ESCALATE_FILE_DIRECTLY=true` and a token for the forge, an `IssueFiler` files it through the
API instead (bot/issues/filing.py); the thread keeps the link either way (Session.escalations) and
a second `escalate` on the same question returns the issue already filed instead of a duplicate.
An `EscalationJournal`, when wired, also hears of each new escalation (or its filing) once, for the
admin report's escalations section.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal, Protocol
from urllib.parse import quote

from core.environment import environment_from_session
from core.knowledge.loader import load_knowledge_base
from core.messages import InboundMessage, Language, Reply, ReplyKind
from core.research.redact import Redactor, defang_mentions
from core.resolution.focus import focus
from core.session import Session, SessionStore

Forge = Literal["github", "gitcode"]

ESCALATE_CHOICE = "escalate"  # the key an Escalate button sends back (fits every platform's button data)
ESCALATE_WORDS = frozenset({"escalate", "/escalate", "提交问题", "/提交问题", "提交issue", "提交 issue", "上报问题"})
MAX_URL_CHARS = 6_000  # GitHub rejects new-issue URLs far past 8 KB; stay well under on every forge
MAX_PASTE_CHARS = 6_000  # the body shown for pasting (GitCode) stays one readable message
TITLE_CHARS = 120
QUESTION_CHARS = 1_500
# Shorter cuts of the user's words tried, in turn, before the end of the body is cut for a URL: the
# environment, command, log lines and checked links are worth more to a maintainer than prose.
QUESTION_STEPS = (QUESTION_CHARS, 600, 250, 100)
MAX_SOURCES = 8
MAX_RECORDS = 5  # escalations a thread remembers
TRIMMED = "\n\n(trimmed)"
REFERENCE_PREFIX = "aic-ref:"  # + the question's digest, in the body's first line (`reference`)
_HOSTS: Mapping[Forge, str] = {"github": "https://github.com", "gitcode": "https://gitcode.com"}
_NEW_PAGE: Mapping[Forge, str] = {"github": "issues/new", "gitcode": "issues/create"}
# `@user`, `@org/team` at a word start notify people on GitHub and GitCode; `<@U123>` is Slack's form.
_MENTION = re.compile(r"(?<![\w.@/])@(?=[A-Za-z0-9_-])")
_SLACK_MENTION = re.compile(r"<@[A-Z0-9]{1,40}(?:\|[^>\n]{0,80})?>")
_FENCE = re.compile(r"`{3,}|~{3,}")


@dataclass(frozen=True)
class Escalation:
    """One issue draft: where it goes, what it says, and the link that opens it pre-filled."""

    repo: str  # the knowledge base's repository id ("vllm-project/vllm-ascend")
    product: str  # its display name
    forge: Forge
    api_repo: str  # owner/name on the forge ("Ascend/MindIE-LLM")
    title: str
    body: str  # the full redacted body (what a direct filing sends)
    labels: tuple[str, ...]
    url: str  # the pre-filled new-issue page, at most MAX_URL_CHARS
    trimmed: bool  # the URL carries a shortened body
    question_id: str  # a digest of the question: one escalation per question per thread

    @property
    def issues_page(self) -> str:
        return f"{_HOSTS[self.forge]}/{self.api_repo}/issues"


class IssueFiler(Protocol):
    """Files an issue through a forge's API; returns the new issue's web URL, or None when it cannot
    (no token for that forge, an API error: the pre-filled link is the answer then)."""

    async def file(self, escalation: Escalation) -> str | None: ...


class EscalationJournal(Protocol):
    """Keeps one record per escalation for the admin report (bot/report/escalations.py). Must not
    raise: the user's link matters more than a report line."""

    async def escalated(self, where: InboundMessage, escalation: Escalation, question: str, issue_url: str,
                        state: str, at: float, language: Language = "en") -> None: ...


class NoQuestion(Exception):
    """The thread holds no question to take upstream."""


class NoProduct(Exception):
    """The thread's question was never routed to a product with an issue tracker."""


class Escalator:
    """The `escalate` command of a thread: builds the draft, optionally files it, records the link."""

    def __init__(self, redact: Callable[[str], str] = Redactor(()), filer: IssueFiler | None = None,
                 journal: EscalationJournal | None = None) -> None:
        self._redact = redact  # the project's redactor (configured secrets too, when wired from settings)
        self._filer = filer  # set only with ESCALATE_FILE_DIRECTLY and a token
        self._journal = journal  # the admin report's escalation log (absent in the terminal and in tests)

    async def handle(self, key: str, session: Session, sessions: SessionStore, language: Language, now: float,
                     where: InboundMessage | None = None) -> Reply:
        question = thread_question(session)
        try:
            escalation = build_escalation(question, session.repos, session.env, session.last_sources, self._redact)
        except (NoQuestion, NoProduct) as reason:
            return Reply(ReplyKind.NOTICE, failure_text(reason, language), language)
        filed = already_filed(session.escalations, escalation.question_id)
        if filed is None and self._filer is not None:
            filed = await self._filer.file(escalation)
        kept = record(escalation, filed or "", now)
        await sessions.update(key, lambda s: replace(s, escalations=remembered(s.escalations, kept)))
        if self._journal is not None and where is not None and is_news(session.escalations, kept):
            await self._journal.escalated(where, escalation, question, kept["url"], "filed" if filed else "opened", now,
                                          language)
        return Reply(ReplyKind.NOTICE, escalation_text(escalation, language, filed), language, repos=(escalation.repo,))


def thread_question(session: Session) -> str:
    """The question the last answer answered (the user turn before the last assistant turn), else the
    last question asked; "" when the thread holds none."""
    turns = session.turns
    last_answer = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].role == "assistant"), None)
    before = turns[:last_answer] if last_answer is not None else turns
    return next((t.text for t in reversed(before) if t.role == "user"), "")


def is_escalate_command(word: str) -> bool:
    """`word` is the lower-cased, trimmed message (core/conversation.py's command word)."""
    return word in ESCALATE_WORDS


def question_digest(question: str) -> str:
    return hashlib.sha256(question.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def build_escalation(
    question: str,
    repos: Sequence[str],
    env: Mapping[str, Any] | None,
    checked: Sequence[Mapping[str, str]],
    redact: Callable[[str], str] = Redactor(()),
) -> Escalation:
    """The issue draft for `question` (the thread's last question) in the first of `repos` that has
    an issue tracker; raises NoQuestion / NoProduct when there is nothing to take upstream."""
    if not question.strip():
        raise NoQuestion()
    kb = load_knowledge_base()
    info = next((r for r in (kb.repository(name) for name in repos) if r is not None and r.issue_tracker.api_repo), None)
    if info is None:
        raise NoProduct()
    forge: Forge = "gitcode" if info.issue_tracker.kind == "gitcode" else "github"

    def safe(text: str) -> str:
        return _defang(redact(text))

    seen = focus(question)
    title = _title(safe(seen.keyed_on or _first_line(seen.prose or question)), info.display_name)
    words = safe(seen.prose if seen.is_paste else question).strip()
    environment = _environment_lines(env)
    command = safe(seen.command)
    errors = list(dict.fromkeys(safe(e.line) for e in seen.errors))
    sources = [(safe(c.get("title", "")), c.get("url", "")) for c in checked[:MAX_SOURCES]]

    question_id = question_digest(question)

    def body_with(question_chars: int) -> str:
        return _body(zh=forge == "gitcode",  # MindIE and msModelSlim maintainers triage in Chinese
                     question=_clip(words, question_chars), environment=environment, command=command,
                     errors=errors, checked=sources, ref=question_id)

    labels = ("bug",) if seen.errors else ("question",)
    api_repo = info.issue_tracker.api_repo
    for chars in QUESTION_STEPS:
        url, cut = new_issue_url(forge, api_repo, title, body_with(chars), labels)
        if not cut:
            break
    trimmed = cut or len(words) > chars
    return Escalation(info.repo, info.display_name, forge, api_repo, title, body_with(QUESTION_CHARS), labels, url,
                      trimmed, question_id)


def new_issue_url(forge: Forge, api_repo: str, title: str, body: str, labels: Sequence[str]) -> tuple[str, bool]:
    """The pre-filled new-issue URL, at most MAX_URL_CHARS long, and whether the body was cut to fit."""
    base = f"{_HOSTS[forge]}/{api_repo}/{_NEW_PAGE[forge]}"

    def build(text: str) -> str:
        params = [("title", title), ("body", text)]
        if forge == "github" and labels:
            params.append(("labels", ",".join(labels)))
        return base + "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in params)

    url = build(body)
    if len(url) <= MAX_URL_CHARS:
        return url, False
    # Longest prefix of the body that fits (encoded lengths grow with the prefix: a binary search).
    low, high = 0, len(body)
    while low < high:
        mid = (low + high + 1) // 2
        if len(build(_cut(body, mid))) <= MAX_URL_CHARS:
            low = mid
        else:
            high = mid - 1
    return build(_cut(body, low)), True


def paste_body(escalation: Escalation) -> str:
    """The body to paste into a new-issue page that ignores pre-fill parameters: one fenced block
    (inner fences written as ~~~, so the outer ``` holds), bounded like the URL."""
    text = escalation.body.replace("```", "~~~")
    if len(text) > MAX_PASTE_CHARS:
        text = _cut(text, MAX_PASTE_CHARS)
    return f"```markdown\n{text}\n```"


def record(escalation: Escalation, filed_url: str, at: float) -> dict[str, str]:
    """What the thread keeps of an escalation (Session.escalations)."""
    return {"repo": escalation.repo, "question": escalation.question_id, "url": filed_url or escalation.url,
            "filed": "yes" if filed_url else "", "at": f"{at:.0f}"}


def already_filed(records: Sequence[Mapping[str, str]], question_id: str) -> str | None:
    """The issue filed for this question before (a retried job or a second click must not file twice)."""
    return next((r.get("url") for r in records if r.get("question") == question_id and r.get("filed") == "yes"), None)


def is_news(records: Sequence[Mapping[str, str]], new: Mapping[str, str]) -> bool:
    """The report hears of an escalation once per question, repository and state (a second click on
    the same question, or a retried job, is no new escalation; filing one that was opened is)."""
    return not any(r.get("question") == new.get("question") and r.get("repo") == new.get("repo")
                   and r.get("filed") == new.get("filed") for r in records)


def remembered(records: Sequence[Mapping[str, str]], new: Mapping[str, str]) -> tuple[dict[str, str], ...]:
    kept = [dict(r) for r in records if not (r.get("question") == new.get("question") and r.get("repo") == new.get("repo"))]
    return tuple([*kept, dict(new)][-MAX_RECORDS:])


def escalation_text(escalation: Escalation, language: Language, filed_url: str | None) -> str:
    """The reply: the link (or the filed issue), what it holds, and for GitCode the text to paste."""
    zh = language == "zh"
    if filed_url:
        return (f"已在 {escalation.product} 的问题跟踪中提交：{filed_url}" if zh
                else f"Filed upstream in {escalation.product}'s tracker: {filed_url}")
    forge = "GitHub" if escalation.forge == "github" else "GitCode"
    lines = [
        (f"在 {forge} 上向 {escalation.product}（{escalation.api_repo}）提交问题，打开这个已预填的链接，检查后提交："
         if zh else f"To take this to {escalation.product} ({escalation.api_repo}) on {forge}, open this pre-filled "
         "new-issue link, review it and submit:"),
        escalation.url,
        ("内容：你的问题、线程中读取到的环境、命令和关键日志行、我已查过的资料；密钥已隐去。" if zh
         else "It holds your question, the environment read from this thread, the command and the decisive log "
         "lines, and what I already checked; secrets are redacted."),
    ]
    if escalation.trimmed:
        lines.append("正文太长，链接中的内容已截短（trimmed），请在页面上补充。" if zh
                     else "The body was too long for a link and is trimmed there; add the rest on the page.")
    if escalation.forge == "gitcode":
        lines += [
            ("如果页面没有自动填入，请复制下面的标题和正文：" if zh
             else "If the page does not fill itself in, paste this title and body:"),
            f"**{'标题' if zh else 'Title'}:** {escalation.title}",
            paste_body(escalation),
        ]
    return "\n\n".join(lines)


def failure_text(reason: NoQuestion | NoProduct, language: Language) -> str:
    zh = language == "zh"
    if isinstance(reason, NoQuestion):
        return ("这个线程里还没有问题可以提交：先提问，我回答后再发送「提交问题」。" if zh
                else "There is no question in this thread to escalate yet: ask it first, then send `escalate` after my answer.")
    return ("还不知道这个问题属于哪个产品，无法选择仓库：请说明产品（如 vllm-ascend、MindIE-LLM），再发送「提交问题」。" if zh
            else "I don't know which product this question is about, so I can't pick the repository: name the product "
            "(vllm-ascend, MindIE-LLM, …) and send `escalate` again.")


# --- pieces of the body -------------------------------------------------------------------------

_HEADINGS = {
    False: ("Question", "Environment", "Command", "Decisive log lines", "What the assistant already checked",
            "Not stated in the thread.", "No specific source matched.",
            "Drafted by Ascend Inference Copilot from a chat thread; secrets redacted."),
    True: ("问题", "环境", "命令", "关键日志行", "助手已查过的资料", "线程中未提供。", "没有找到具体的资料。",
           "由昇腾推理助手根据聊天线程起草；密钥已隐去。"),
}


def reference(question_id: str) -> str:
    """The marker the body starts with, an HTML comment (hidden where the forge renders Markdown):
    the issue a user files from the pre-filled link is found by it after a `sync --issues`, so the
    maintainer's answer can go back to the thread (bot/issues/followup.py). At the top, so a body cut
    to fit the URL keeps it."""
    return f"<!-- {REFERENCE_PREFIX}{question_id} -->"


def _body(*, zh: bool, question: str, environment: list[str], command: str, errors: list[str],
          checked: list[tuple[str, str]], ref: str = "") -> str:
    h_question, h_env, h_command, h_logs, h_checked, no_env, no_checked, footer = _HEADINGS[zh]
    parts = [reference(ref)] if ref else []
    parts += [f"### {h_question}\n\n{_balanced(question.strip())}", f"### {h_env}\n\n" + ("\n".join(environment) or no_env)]
    if command:
        parts.append(f"### {h_command}\n\n~~~\n{_unfenced(command)}\n~~~")
    if errors:
        parts.append(f"### {h_logs}\n\n~~~\n" + "\n".join(_unfenced(e) for e in errors) + "\n~~~")
    shown = [f"- [{_link_label(title or url)}]({_link_target(url)})" for title, url in checked if url.startswith("https://")]
    parts.append(f"### {h_checked}\n\n" + ("\n".join(shown) or no_checked))
    parts.append(f"---\n{footer}")
    return "\n\n".join(parts)


def _environment_lines(env: Mapping[str, Any] | None) -> list[str]:
    """One bullet per value the thread stated (core/environment.py's fields, in their order)."""
    known = environment_from_session(env)
    return [f"- {field}: {_defang(value)}" for field, value in known.values if field not in ("image_target",)]


def _title(text: str, product: str) -> str:
    line = " ".join(text.split())
    if len(line) > TITLE_CHARS:
        line = line[: TITLE_CHARS - 1].rstrip() + "…"
    return line or f"{product}: question from a chat thread"


def _clip(words: str, chars: int) -> str:
    return words if len(words) <= chars else words[:chars].rstrip() + " … (trimmed)"


def _first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def _defang(text: str) -> str:
    """No @mention, @channel or Slack `<@U…>` that would notify anyone from a filed issue."""
    return _MENTION.sub("@\u200b", defang_mentions(_SLACK_MENTION.sub("@user", text)))


def _unfenced(text: str) -> str:
    """User text inside our ~~~ blocks cannot close them (nor open one of its own)."""
    return _FENCE.sub("''", text)


def _balanced(text: str) -> str:
    """The user's own Markdown as written, with an unclosed code fence closed so it cannot swallow
    the sections after it."""
    return text + "\n```" if len(re.findall(r"(?m)^[ \t]{0,3}```", text)) % 2 else text


def _link_label(text: str) -> str:
    return re.sub(r"[\[\]\n]", " ", text)[:200]


def _link_target(url: str) -> str:
    return url.replace(" ", "%20").replace("(", "%28").replace(")", "%29")


def _cut(body: str, chars: int) -> str:
    """`body` cut to `chars`, an open ~~~ block closed, and marked as trimmed."""
    cut = body[:chars].rstrip()
    if cut.count("\n~~~") % 2 == 1:
        cut += "\n~~~"
    return cut + TRIMMED
