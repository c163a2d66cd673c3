"""`search_issues` and `get_issue`: the local issue index and resolution memory first, then
GitHub REST for vllm-project/* and sgl-project/* and GitCode API v5 for the Ascend originals of
MindIE-* and msModelSlim.

The local index (threads downloaded by `sync --issues`) answers at once, has no rate limit and
matches a pasted log by its decisive lines; the live API adds what is newer than the last sync.

Tokens are optional and travel only in the Authorization header (never in a
URL, so they cannot leak through an error message). Rate limits and HTTP
errors come back as tool results the model can read.
"""
from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass
from collections.abc import Callable
from typing import Any, ClassVar, Literal
from urllib.parse import urlsplit

import httpx
from pydantic import Field

from core.index.passage import Retriever
from core.messages import Language, Source
from core.research.repos import RepoInfo
from core.resolution.answer import WHO
from core.resolution.focus import focus
from core.resolution.memory import ResolutionMemory
from core.resolution.record import Resolution
from core.untrusted_text import plain_line
from core.research.tools.base import RepoArgs, ToolOutput, failure, short

SEARCH_LIMIT = 10
LOCAL_LIMIT = 6
LOCAL_ENOUGH = 3  # this many local hits and the live API is not asked
MemorySource = Callable[[], ResolutionMemory]
BODY_CHARS = 6000
SNIPPET_CHARS = 240
COMMENT_CHARS = 1500
MAX_COMMENTS = 8


class IssueApis:
    """HTTP access to both trackers, sharing one connection pool."""

    def __init__(self, http: httpx.AsyncClient, github_url: str, github_token: str, gitcode_url: str, gitcode_token: str) -> None:
        self._http = http
        self._github = github_url.rstrip("/")
        self._gitcode = gitcode_url.rstrip("/")
        self._github_headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
        if github_token:
            self._github_headers["Authorization"] = f"Bearer {github_token}"
        self._gitcode_headers = {"Accept": "application/json"}
        if gitcode_token:
            self._gitcode_headers["Authorization"] = f"Bearer {gitcode_token}"

    async def get(self, repo: RepoInfo, path: str, params: dict[str, Any] | None = None) -> Any:
        """GET a tracker path; raises _ApiProblem with a model-readable message on failure."""
        github = repo.issue_host == "github"
        base, headers = (self._github, self._github_headers) if github else (self._gitcode, self._gitcode_headers)
        host = "GitHub" if github else "GitCode"
        try:
            response = await self._http.get(base + path, params=params, headers=headers)
        except httpx.HTTPError as exc:
            raise _ApiProblem(f"{host} could not be reached ({type(exc).__name__}). Try again later or use other tools.") from None
        if response.status_code == 429 or (
            response.status_code == 403 and response.headers.get("x-ratelimit-remaining") == "0"
        ):
            raise _ApiProblem(_rate_limited(host, response, bool(headers.get("Authorization"))))
        if response.status_code == 404:
            raise _ApiProblem(f"{host} returned 404 (not found) for {repo.issue_repo}.")
        if response.status_code in (401, 403):
            raise _ApiProblem(f"{host} refused the request (HTTP {response.status_code}); the token may be missing or invalid.")
        if response.status_code >= 400:
            raise _ApiProblem(f"{host} returned HTTP {response.status_code}: {api_error_message(response)}")
        try:
            return response.json()
        except ValueError:
            raise _ApiProblem(f"{host} returned a response that is not JSON.") from None


class _ApiProblem(Exception):
    pass


def _rate_limited(host: str, response: httpx.Response, has_token: bool) -> str:
    wait = response.headers.get("retry-after")
    reset = response.headers.get("x-ratelimit-reset")
    if not wait and reset and reset.isdigit():
        wait = str(max(0, int(reset) - int(time.time())))
    when = f" for about {wait} s" if wait else ""
    hint = "" if has_token else f" (an operator can set {'GITHUB_TOKEN' if host == 'GitHub' else 'GITCODE_TOKEN'} for a higher limit)"
    return (
        f"{host} rate limit reached{when}{hint}. Do not call {host} issue tools again in this answer; "
        "continue with ask_deepwiki, search_code or what you already found."
    )


def api_error_message(response: httpx.Response) -> str:
    """The `message` a code host's REST API put in an error body (GitHub and GitCode both do), clipped."""
    try:
        data = response.json()
    except ValueError:
        return "no details"
    message = data.get("message") if isinstance(data, dict) else None
    return short(str(message), 200) if message else "no details"


def _clip(text: str | None, limit: int) -> str:
    text = (text or "").strip()
    return text if len(text) <= limit else text[:limit] + f"\n… [{len(text) - limit} more characters]"


# GitHub search syntax the model's (or a user's) words must not be able to use: operators that join
# another query, and `key:value` qualifiers (repo:, org:, user:, is:, in: …) that would widen the search.
_OPERATORS = {"OR", "AND", "NOT"}
_QUALIFIER = re.compile(r"^-?[A-Za-z][\w-]{0,30}:")


def github_terms(query: str) -> str:
    """The free text as quoted terms: `repo:x OR y` becomes `"repo:x" "OR" "y"`, three plain words.

    GitHub has no escape for a quote inside a quoted term, so quotes (and backslashes) become spaces.
    Each word is quoted on its own, so the terms are still ANDed as before, not turned into one phrase.
    """
    words = query.replace('"', " ").replace("\\", " ").split()
    return " ".join(f'"{word}"' for word in words)


def gitcode_terms(query: str) -> str:
    """GitCode takes plain keywords (the repository is its own parameter): take qualifier syntax apart."""
    words = []
    for word in query.replace('"', " ").replace("\\", " ").split():
        if word in _OPERATORS:
            continue
        match = _QUALIFIER.match(word)
        words.append(f"{match.group(0)[:-1].lstrip('-')} {word[match.end():]}".strip() if match else word)
    return " ".join(words)


def item_repository(item: dict[str, Any]) -> str:
    """owner/name of a search result, from its html_url, checked against what the API says it belongs to.

    '' when the result names no repository or contradicts itself: such a result is dropped.
    """
    parts = urlsplit(str(item.get("html_url") or "")).path.strip("/").split("/")
    if len(parts) < 3:
        return ""
    from_url = f"{parts[0]}/{parts[1]}".lower()
    declared = []
    repo_url = item.get("repository_url")  # GitHub: https://api.github.com/repos/owner/name
    if isinstance(repo_url, str) and "/repos/" in repo_url:
        declared.append(repo_url.rsplit("/repos/", 1)[1].strip("/").lower())
    repository = item.get("repository")  # GitCode v5: {"full_name": "owner/name", ...}
    if isinstance(repository, dict) and isinstance(repository.get("full_name"), str):
        declared.append(repository["full_name"].strip("/").lower())
    return from_url if all(d == from_url for d in declared) else ""


class SearchIssuesArgs(RepoArgs):
    query: str = Field(min_length=1, max_length=256, description="Keywords, an error code or an error message fragment.")
    state: Literal["open", "closed", "all"] = Field(default="all", description="open, closed or all (default all).")


@dataclass
class SearchIssues:
    name: ClassVar[str] = "search_issues"
    description: ClassVar[str] = (
        "Search the issue tracker of one repository (GitHub for vllm-project/* and sgl-project/*, GitCode "
        "for the Ascend originals of MindIE-* and msModelSlim). Use it proactively for error codes "
        "(e.g. 507015), version-specific bugs, feature-combination failures and hardware-specific problems. "
        "Returns issue numbers, titles, states and links; read one with get_issue. Queries in English; "
        "also try key identifiers, since many titles are in Chinese."
    )
    Args: ClassVar[type[SearchIssuesArgs]] = SearchIssuesArgs
    apis: IssueApis
    cache_ttl: int
    timeout: float
    local: Retriever | None = None  # the downloaded threads (knowledge index), asked before the live API
    memory: MemorySource | None = None  # resolved threads: what fixed it

    def describe(self, args: SearchIssuesArgs, language: Language) -> str:
        if language == "zh":
            return f"正在搜索 {args.repo} 的 issue：{short(args.query)}"
        return f"Searching {args.repo} issues for {short(args.query)}"

    async def run(self, args: SearchIssuesArgs) -> ToolOutput:
        local = await self._search_local(args)
        if local is not None and len(local.sources) >= LOCAL_ENOUGH:
            return local
        live = await self._search_live(args)
        if local is None or not local.sources:
            return live
        if live.is_error:  # what the index knows is still an answer
            return ToolOutput(f"{local.text}\n\n(live search unavailable: {short(live.text, 200)})", local.sources)
        known = {s.url for s in local.sources}
        return ToolOutput(f"{local.text}\n\n{live.text}", (*local.sources, *(s for s in live.sources if s.url not in known)))

    async def _search_local(self, args: SearchIssuesArgs) -> ToolOutput | None:
        """Threads of the local index, with what resolved them; None without an index."""
        if self.local is None:
            return None
        query = focus(args.query).query() or args.query
        try:
            found = await asyncio.to_thread(self.local.search, query, (args.info.name,), LOCAL_LIMIT * 2, "issue")
        except Exception:  # noqa: BLE001 - the live search still runs
            return None
        memory = self.memory() if self.memory is not None else None
        lines, sources = [], []
        for passage in found:
            number = _thread_number(passage.path)
            record = memory.get(passage.repo, number) if memory is not None and number else None
            state = record.state if record else "?"
            if args.state != "all" and record is not None and record.state != args.state:
                continue
            title = plain_line(passage.title, 160)
            lines.append(f"- {title} [{state}]\n  {passage.url}")
            if record is not None and record.resolved:
                lines.append(f"  {resolution_line(record)}")
            sources.append(Source(f"{passage.repo}#{number}: {title}", passage.url))
            if len(sources) >= LOCAL_LIMIT:
                break
        if not sources:
            return ToolOutput(f"Local issue index of {args.info.name}: no thread matches \"{short(args.query)}\".")
        head = f"Local issue index of {args.info.name} (downloaded threads; newest may be missing), matching \"{short(args.query)}\":"
        return ToolOutput("\n".join([head, *lines]), tuple(sources))

    async def _search_live(self, args: SearchIssuesArgs) -> ToolOutput:
        repo = args.info
        if not (github_terms if repo.issue_host == "github" else gitcode_terms)(args.query):
            return failure("The query has no words to search for (quotes and OR/AND/NOT alone are not searched).")
        try:
            if repo.issue_host == "github":
                items, total = await self._github(repo, args)
            else:
                items, total = await self._gitcode(repo, args)
        except _ApiProblem as problem:
            return failure(str(problem))
        where = f"{'GitHub' if repo.issue_host == 'github' else 'GitCode'} issues of {repo.issue_repo}"
        head = f"{where} matching \"{args.query}\" (state {args.state})"
        if not items:
            return ToolOutput(f"{head}: no results. Try fewer or different keywords.")
        wanted = repo.issue_repo.lower()
        kept = [i for i in items if item_repository(i) == wanted]
        # A result from another repository is dropped, never shown under this one's name.
        dropped = len(items) - len(kept)
        items = kept
        if not items:
            return ToolOutput(f"{head}: no results in {repo.issue_repo}. Try fewer or different keywords.")
        lines = [f"{head}: {total if total is not None and not dropped else len(items)} result(s), showing {len(items)}"]
        sources = []
        for item in items:
            number, url, title = item["number"], item["html_url"], plain_line(str(item.get("title") or ""), 160)
            state = item.get("state", "?")
            comments = item.get("comments")
            updated = str(item.get("updated_at") or "")[:10]
            lines.append(f"- #{number} [{state}] {title}\n  {url} (comments: {comments}, updated {updated})")
            snippet = plain_line(str(item.get("body") or ""), SNIPPET_CHARS)
            if snippet:
                lines.append(f"  > {snippet}")
            sources.append(Source(f"{repo.issue_repo}#{number}: {title}", url))
        return ToolOutput("\n".join(lines), tuple(sources))

    async def _github(self, repo: RepoInfo, args: SearchIssuesArgs) -> tuple[list[dict], int | None]:
        # Only our qualifiers are unquoted: the query's words cannot add a repo:, org: or OR of their own.
        q = f"{github_terms(args.query)} repo:{repo.issue_repo} is:issue" + ("" if args.state == "all" else f" state:{args.state}")
        data = await self.apis.get(repo, "/search/issues", {"q": q, "per_page": SEARCH_LIMIT})
        items = [i for i in (data.get("items") or []) if isinstance(i, dict) and i.get("html_url")]
        return items[:SEARCH_LIMIT], data.get("total_count")

    async def _gitcode(self, repo: RepoInfo, args: SearchIssuesArgs) -> tuple[list[dict], int | None]:
        params: dict[str, Any] = {"q": gitcode_terms(args.query), "repo": repo.issue_repo, "per_page": SEARCH_LIMIT}
        if args.state != "all":
            params["state"] = args.state
        data = await self.apis.get(repo, "/search/issues", params)
        items = data if isinstance(data, list) else []
        return [i for i in items if isinstance(i, dict) and i.get("html_url")][:SEARCH_LIMIT], None


class GetIssueArgs(RepoArgs):
    number: int = Field(ge=1, le=10_000_000, description="Issue number.")


@dataclass
class GetIssue:
    name: ClassVar[str] = "get_issue"
    description: ClassVar[str] = (
        "Read one issue of a repository: title, state, labels, body and its first comments, with the "
        "commenter's role (maintainer comments are more reliable than bot or stale-closing messages)."
    )
    Args: ClassVar[type[GetIssueArgs]] = GetIssueArgs
    apis: IssueApis
    cache_ttl: int
    timeout: float
    memory: MemorySource | None = None

    def describe(self, args: GetIssueArgs, language: Language) -> str:
        return f"正在阅读 {args.repo} 的 issue #{args.number}" if language == "zh" else f"Reading {args.repo} issue #{args.number}"

    async def run(self, args: GetIssueArgs) -> ToolOutput:
        repo = args.info
        path = f"/repos/{repo.issue_repo}/issues/{args.number}"
        record = self.memory().get(repo.name, args.number) if self.memory is not None else None
        try:
            issue = await self.apis.get(repo, path)
        except _ApiProblem as problem:
            if record is not None:  # the downloaded thread's record still answers
                return ToolOutput(f"{_record_block(record)}\n(live thread unavailable: {problem})",
                                  (Source(f"{repo.name}#{args.number}: {record.title}", record.url),), origin=f"#{args.number}")
            return failure(str(problem).replace(f"for {repo.issue_repo}", f"for issue #{args.number} of {repo.issue_repo}"))
        if not isinstance(issue, dict) or not issue.get("html_url"):
            return failure(f"Issue #{args.number} of {repo.issue_repo} came back empty.")
        comments: list[dict] = []
        comments_note = ""
        try:
            data = await self.apis.get(repo, f"{path}/comments", {"per_page": MAX_COMMENTS})
            comments = [c for c in data if isinstance(c, dict)] if isinstance(data, list) else []
        except _ApiProblem as problem:
            comments_note = f"\n(comments unavailable: {problem})"
        url = issue["html_url"]
        labels = ", ".join(str(l.get("name")) for l in issue.get("labels") or [] if isinstance(l, dict))
        author = (issue.get("user") or {}).get("login", "?")
        lines = [
            f"Issue #{args.number} of {repo.issue_repo}: {plain_line(str(issue.get('title') or ''), 200)}",
            url,
            f"state: {issue.get('state')}; labels: {labels or 'none'}; author: {author}; "
            f"created {str(issue.get('created_at') or '')[:10]}; comments: {issue.get('comments', len(comments))}",
            "",
            _clip(issue.get("body"), BODY_CHARS) or "(no description)",
        ]
        for comment in comments[:MAX_COMMENTS]:
            who = (comment.get("user") or {}).get("login", "?")
            role = comment.get("author_association")
            role_text = f" [{role}]" if role and role != "NONE" else ""
            lines += ["", f"--- comment by {who}{role_text}, {str(comment.get('created_at') or '')[:10]}", _clip(comment.get("body"), COMMENT_CHARS)]
        total = issue.get("comments")
        if isinstance(total, int) and total > len(comments[:MAX_COMMENTS]):
            lines.append(f"\n({total - len(comments[:MAX_COMMENTS])} later comments not shown; see {url})")
        if record is not None:
            lines[3:3] = ["", _record_block(record)]
        text = "\n".join(lines) + comments_note
        # The issue's own html_url is the source; every link in its body and comments is the authors' claim.
        source = Source(f"{repo.issue_repo}#{args.number}: {plain_line(str(issue.get('title') or ''), 120)}", url)
        return ToolOutput(text, (source,), origin=f"#{args.number}")


def _thread_number(path: str) -> int:
    kind, _, number = path.partition("/")
    return int(number) if kind in ("issues", "pulls") and number.isdigit() else 0


def resolution_line(record: Resolution) -> str:
    """One line on what resolved a thread; its words are the thread's (untrusted), the labels ours."""
    who = WHO["en"].get(record.said_by, "?")
    parts = [f"resolved by {who}" + (", confirmed by the reporter" if record.confirmed else "")]
    if record.closed_by:
        parts.append(f"fixed by #{record.closed_by[0]}" + (f", first released in {record.release}" if record.release else ", in no release tag yet"))
    elif record.fixed_by:
        parts.append(f"pull request named in the thread: #{record.fixed_by[0]}" + (f" (first in {record.release})" if record.release else ""))
    elif record.kind == "pull" and record.release:
        parts.append(f"first released in {record.release}")
    if record.duplicate_of:
        parts.append(f"duplicate of #{record.duplicate_of}")
    said = f': "{record.summary}"' if record.summary else ""
    return "; ".join(parts) + said


def _record_block(record: Resolution) -> str:
    lines = ["Resolution record (derived from the thread without a model; quoted words are the commenter's):",
             f"- {resolution_line(record)}" if record.resolved else "- no resolution stated in the thread"]
    if record.fix_items:
        lines.append("- items named: " + "; ".join(record.fix_items))
    if record.error_line:
        lines.append(f"- decisive error line of the report: {record.error_line}")
    return "\n".join(lines)
