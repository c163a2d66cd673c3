"""Local fakes of the issue *listing* APIs (GitHub REST, GitCode v5) for `sync --issues`.

Unlike fake_issue_apis.py (search and single issues for the research tools), these serve the
repository listing the way the real APIs page it: `state=all&sort=updated&direction=desc`,
`since` (updated at or after), `per_page`, pull requests mixed in on GitHub, and comments per
issue. GitHub pages like it does on large listings: the first page by `page=1`, every next page
through the Link header at `/repositories/<id>/issues?…&after=<cursor>`, and a deeper `page`
number is refused with 422. GitCode pages by `page` with a `total_page` header.

Faults are scripted by the test: a status for given pages (`fail_listing`), GitHub's budget
running out with a reset time taken from the test's clock (`exhaust_budget`), GitCode's 429
(`throttle`). A request that arrives while the budget is exhausted and before the reset is
answered 403 and counted in `early_requests`, so a test can tell waiting from hammering.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.fake_http import FakeServer

Kind = Literal["github", "gitcode"]


class FakeClock:
    """Wall and monotonic time that only move when the code under test sleeps."""

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.now = start
        self.mono = 0.0
        self.sleeps: list[float] = []

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.mono

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        self.mono += seconds


@dataclass
class HostedIssue:
    number: int
    title: str
    updated_at: str  # ISO, e.g. "2026-05-01T10:00:00Z"
    body: str = ""
    state: str = "open"  # open | closed
    labels: tuple[str, ...] = ()
    created_at: str = "2026-01-01T00:00:00Z"
    closed_at: str | None = None
    pull_request: bool = False
    comments: list[dict[str, Any]] = field(default_factory=list)


def note(login: str, body: str, role: str = "NONE") -> dict[str, Any]:
    return {"user": {"login": login}, "body": body, "author_association": role, "created_at": "2026-05-01T00:00:00Z"}


@dataclass
class _ListingFault:
    pages: set[int] | None  # None: every page
    status: int
    times: int | None  # None: forever


class FakeIssueHost:
    def __init__(self, kind: Kind, issues: dict[str, list[HostedIssue]], clock: FakeClock | None = None) -> None:
        self.kind = kind
        self.issues = issues  # "owner/name" on the host -> issues (and, on GitHub, pull requests)
        self.clock = clock or FakeClock()
        self.prefix = "" if kind == "github" else "/api/v5"
        self.web = "https://github.com" if kind == "github" else "https://gitcode.com"
        self._faults: list[_ListingFault] = []
        self._budget_after: int | None = None  # responses left before the budget runs out
        self._reset_in = 0.0
        self._reset_at: float | None = None
        self._throttle = 0
        self._retry_after = 0
        self.early_requests = 0
        self.served: list[tuple[str, int]] = []  # (repo, page number) of every listing page answered
        self._cursor_epoch = 0  # bumped by expire_cursors(): older cursors are refused
        self._repo_ids = {repo: 1000 + i for i, repo in enumerate(issues)}
        self.server = FakeServer(
            [
                Route(self.prefix + "/repos/{owner}/{name}/issues", self._listing),
                Route("/repositories/{repo_id:int}/issues", self._listing),
                Route(self.prefix + "/repos/{owner}/{name}/issues/{number:int}/comments", self._comments),
            ]
        )

    # --- scripting -------------------------------------------------------------------------
    def fail_listing(self, status: int, pages: set[int] | None = None, times: int | None = 1) -> None:
        """Answer listing pages with `status` (200: a JSON object instead of the list)."""
        self._faults.append(_ListingFault(pages, status, times))

    def clear_faults(self) -> None:
        self._faults.clear()

    def exhaust_budget(self, after_responses: int, reset_in: float) -> None:
        """GitHub: response number `after_responses` says remaining 0, reset `reset_in` s later (0: now)."""
        self._reset_in = reset_in
        if after_responses == 0:  # already exhausted: the very next request is refused
            self._budget_after = None
            self._reset_at = math.ceil(self.clock.time() + reset_in)
        else:
            self._budget_after = after_responses

    def expire_cursors(self) -> None:
        """GitHub: cursors handed out so far are refused (422) from now on."""
        self._cursor_epoch += 1

    def throttle(self, requests: int, retry_after: int) -> None:
        """GitCode: the next `requests` requests are answered 429 with Retry-After."""
        self._throttle = requests
        self._retry_after = retry_after

    # --- inspection ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.server.url

    @property
    def api_url(self) -> str:
        return self.server.url + self.prefix

    def listing_requests(self, repo: str) -> list[dict[str, str]]:
        paths = {f"{self.prefix}/repos/{repo}/issues", f"/repositories/{self._repo_ids.get(repo)}/issues"}
        return [r.query for r in self.server.requests if r.path in paths]

    def pages(self, repo: str) -> list[int]:
        """The listing pages answered with issues, in order (retried and refused requests excluded)."""
        return [page for name, page in self.served if name == repo]

    def comment_requests(self) -> list[str]:
        return [r.path for r in self.server.requests if r.path.endswith("/comments")]

    async def __aenter__(self) -> FakeIssueHost:
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)

    # --- behaviour -------------------------------------------------------------------------
    def _gate(self) -> Response | None:
        if self._throttle > 0:
            self._throttle -= 1
            return JSONResponse({"message": "Too Many Requests"}, status_code=429, headers={"retry-after": str(self._retry_after)})
        if self._reset_at is not None:
            if self.clock.time() < self._reset_at:
                self.early_requests += 1
                return JSONResponse(
                    {"message": "API rate limit exceeded"},
                    status_code=403,
                    headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(self._reset_at))},
                )
            self._reset_at = None
        return None

    def _budget_headers(self) -> dict[str, str]:
        if self.kind != "github":
            return {}
        if self._budget_after is not None:
            self._budget_after -= 1
            if self._budget_after == 0:
                self._budget_after = None
                self._reset_at = math.ceil(self.clock.time() + self._reset_in)
                return {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(self._reset_at))}
        return {"x-ratelimit-remaining": "4999", "x-ratelimit-reset": str(int(self.clock.time()) + 3600)}

    def _item(self, repo: str, issue: HostedIssue) -> dict[str, Any]:
        item: dict[str, Any] = {
            "number": issue.number if self.kind == "github" else str(issue.number),
            "title": issue.title,
            "body": issue.body,
            "html_url": f"{self.web}/{repo}/{'pull' if issue.pull_request else 'issues'}/{issue.number}",
            "labels": [{"name": n} for n in issue.labels],
            "user": {"login": "reporter"},
            "comments": len(issue.comments),
            "created_at": issue.created_at,
            "updated_at": issue.updated_at,
        }
        if self.kind == "github":
            item["state"] = issue.state
            item["closed_at"] = issue.closed_at
            if issue.pull_request:
                item["pull_request"] = {"url": f"{self.url}/repos/{repo}/pulls/{issue.number}"}
        else:
            item["state"] = "opened" if issue.state == "open" else "closed"
            item["finished_at"] = issue.closed_at
        return item

    async def _listing(self, request: Request) -> Response:
        if (gated := self._gate()) is not None:
            return gated
        if "repo_id" in request.path_params:
            repo = next((r for r, i in self._repo_ids.items() if i == request.path_params["repo_id"]), "")
        else:
            repo = f"{request.path_params['owner']}/{request.path_params['name']}"
        q = request.query_params
        per_page = int(q.get("per_page", "30"))
        if "after" in q:
            epoch, _, page_text = q["after"].partition(".")
            if int(epoch) != self._cursor_epoch:
                return JSONResponse({"message": "cursor expired"}, status_code=422)
            page = int(page_text)
        else:
            page = int(q.get("page", "1"))
            if self.kind == "github" and page > 1:
                return JSONResponse({"message": "Pagination with the page parameter is not supported for large datasets"}, status_code=422)
        for fault in self._faults:
            if (fault.pages is None or page in fault.pages) and (fault.times is None or fault.times > 0):
                if fault.times is not None:
                    fault.times -= 1
                if fault.status == 200:  # a 200 that is not a listing (a proxy's page, an API change)
                    return JSONResponse({"message": "Welcome to the proxy"})
                return JSONResponse({"message": "Server Error"}, status_code=fault.status)
        rows = [i for i in self.issues.get(repo, []) if self.kind == "github" or not i.pull_request]
        if since := q.get("since"):
            rows = [i for i in rows if _epoch(i.updated_at) >= _epoch(since)]
        rows.sort(key=lambda i: (_epoch(i.updated_at), i.number), reverse=q.get("direction", "desc") == "desc")
        total_pages = max(1, math.ceil(len(rows) / per_page))
        chunk = rows[(page - 1) * per_page : page * per_page]
        headers = self._budget_headers()
        if self.kind == "github":
            if page < total_pages:
                keep = {k: v for k, v in q.items() if k not in ("page", "after")}
                query = "&".join(f"{k}={v}" for k, v in {**keep, "after": f"{self._cursor_epoch}.{page + 1}"}.items())
                headers["link"] = f'<{self.url}/repositories/{self._repo_ids[repo]}/issues?{query}>; rel="next"'
        else:
            headers["total_page"] = str(total_pages)
            headers["total_count"] = str(len(rows))
        self.served.append((repo, page))
        return JSONResponse([self._item(repo, i) for i in chunk], headers=headers)

    def _page_url(self, request: Request, page: int) -> str:
        return str(request.url.include_query_params(page=page))

    async def _comments(self, request: Request) -> Response:
        if (gated := self._gate()) is not None:
            return gated
        repo = f"{request.path_params['owner']}/{request.path_params['name']}"
        issue = next((i for i in self.issues.get(repo, []) if i.number == request.path_params["number"]), None)
        if issue is None:
            return JSONResponse({"message": "Not Found"}, status_code=404)
        q = request.query_params
        per_page, page = int(q.get("per_page", "30")), int(q.get("page", "1"))
        rows = list(reversed(issue.comments)) if q.get("order") == "desc" else list(issue.comments)
        chunk = rows[(page - 1) * per_page : page * per_page]
        headers = self._budget_headers()
        total_pages = max(1, math.ceil(len(rows) / per_page))
        if self.kind == "github" and page < total_pages:
            headers["link"] = f'<{self._page_url(request, page + 1)}>; rel="next", <{self._page_url(request, total_pages)}>; rel="last"'
        return JSONResponse(chunk, headers=headers)


def _epoch(value: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
