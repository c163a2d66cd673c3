"""Local fakes of the GitHub REST issue API and the GitCode v5 issue API.

Issues live in memory; search is a case-insensitive substring match over
title and body. `rate_limited = True` makes the server answer like a
limited GitHub (403 + X-RateLimit-Remaining: 0) or GitCode (429).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.support.fake_http import FakeServer


@dataclass
class FakeIssue:
    number: int
    title: str
    body: str
    state: str = "closed"
    comments: list[dict[str, Any]] = field(default_factory=list)


def comment(login: str, body: str, role: str = "NONE") -> dict[str, Any]:
    return {"user": {"login": login}, "body": body, "author_association": role, "created_at": "2026-05-01T00:00:00Z"}


class _IssueServer:
    web = ""

    def __init__(self, issues: dict[str, list[FakeIssue]], routes: list[Route]) -> None:
        self.issues = issues  # "owner/name" -> issues
        self.rate_limited = False
        self.accepts_token = True  # False: every write answers 401 (a revoked token)
        self.server = FakeServer(routes)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def requests(self):  # noqa: ANN201 - the recorded requests of the underlying FakeServer
        return self.server.requests

    async def __aenter__(self):  # noqa: ANN204
        await self.server.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.server.__aexit__(*exc)

    def _find(self, repo: str, number: int) -> FakeIssue | None:
        return next((i for i in self.issues.get(repo, []) if i.number == number), None)

    def _item(self, repo: str, issue: FakeIssue) -> dict[str, Any]:
        return {
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "html_url": f"{self.web}/{repo}/issues/{issue.number}",
            "comments": len(issue.comments),
            "labels": [{"name": "bug"}],
            "user": {"login": "reporter"},
            "created_at": "2026-04-01T00:00:00Z",
            "updated_at": "2026-05-01T00:00:00Z",
        }

    async def _created(self, request: Request, repo: str, data: dict[str, Any]) -> Response:
        """Files an issue like the real API (201 with the issue); 401 without a bearer token."""
        if not self.accepts_token or not request.headers.get("authorization", "").startswith("Bearer "):
            return JSONResponse({"message": "Bad credentials"}, status_code=401)
        if (limited := self._limited()) is not None:
            return limited
        issue = FakeIssue(len(self.issues.get(repo, [])) + 1, str(data.get("title", "")), str(data.get("body", "")), state="open")
        self.issues.setdefault(repo, []).append(issue)
        return JSONResponse(self._item(repo, issue), status_code=201)

    @staticmethod
    def _matches(issue: FakeIssue, words: list[str], state: str | None) -> bool:
        haystack = (issue.title + " " + issue.body).lower()
        return all(w.lower() in haystack for w in words) and (state is None or issue.state == state)


class FakeGitHub(_IssueServer):
    web = "https://github.com"

    def __init__(self, issues: dict[str, list[FakeIssue]]) -> None:
        super().__init__(
            issues,
            [
                Route("/search/issues", self._search),
                Route("/repos/{owner}/{name}/issues", self._create, methods=["POST"]),
                Route("/repos/{owner}/{name}/issues/{number:int}", self._issue),
                Route("/repos/{owner}/{name}/issues/{number:int}/comments", self._comments),
            ],
        )

    def _limited(self) -> Response | None:
        if not self.rate_limited:
            return None
        return JSONResponse(
            {"message": "API rate limit exceeded for 127.0.0.1."},
            status_code=403,
            headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 42)},
        )

    def _item(self, repo: str, issue: FakeIssue) -> dict[str, Any]:
        return {**super()._item(repo, issue), "repository_url": f"{self.url}/repos/{repo}"}

    async def _create(self, request: Request) -> Response:
        return await self._created(request, f"{request.path_params['owner']}/{request.path_params['name']}", await request.json())

    async def _search(self, request: Request) -> Response:
        if (limited := self._limited()) is not None:
            return limited
        # Like GitHub: a quoted term is a plain word; unquoted repo: qualifiers add repositories (OR).
        words, repos, state = [], [], None
        for quoted, token in re.findall(r'"([^"]*)"|(\S+)', request.query_params.get("q", "")):
            if quoted:
                words += quoted.split()
            elif token.startswith("repo:"):
                repos.append(token[5:])
            elif token.startswith("state:"):
                state = token[6:]
            elif not token.startswith("is:"):
                words.append(token)
        found = [self._item(r, i) for r in repos for i in self.issues.get(r, []) if self._matches(i, words, state)]
        return JSONResponse({"total_count": len(found), "incomplete_results": False, "items": found})

    async def _issue(self, request: Request) -> Response:
        if (limited := self._limited()) is not None:
            return limited
        repo = f"{request.path_params['owner']}/{request.path_params['name']}"
        issue = self._find(repo, request.path_params["number"])
        if issue is None:
            return JSONResponse({"message": "Not Found"}, status_code=404)
        return JSONResponse(self._item(repo, issue))

    async def _comments(self, request: Request) -> Response:
        if (limited := self._limited()) is not None:
            return limited
        repo = f"{request.path_params['owner']}/{request.path_params['name']}"
        issue = self._find(repo, request.path_params["number"])
        return JSONResponse(issue.comments if issue else [], status_code=200 if issue else 404)


class FakeGitCode(_IssueServer):
    """GitCode v5 under /api/v5: search returns a bare array and issue numbers as strings."""

    web = "https://gitcode.com"

    def __init__(self, issues: dict[str, list[FakeIssue]]) -> None:
        super().__init__(
            issues,
            [
                Route("/api/v5/search/issues", self._search),
                Route("/api/v5/repos/{owner}/issues", self._create, methods=["POST"]),
                Route("/api/v5/repos/{owner}/{name}/issues/{number:int}", self._issue),
                Route("/api/v5/repos/{owner}/{name}/issues/{number:int}/comments", self._comments),
            ],
        )

    @property
    def api_url(self) -> str:
        return self.url + "/api/v5"

    def _item(self, repo: str, issue: FakeIssue) -> dict[str, Any]:
        item = super()._item(repo, issue)
        item["number"] = str(issue.number)
        item["state"] = "opened" if issue.state == "open" else issue.state
        return item

    def _limited(self) -> Response | None:
        if not self.rate_limited:
            return None
        return JSONResponse({"message": "Too Many Requests"}, status_code=429, headers={"retry-after": "30"})

    async def _create(self, request: Request) -> Response:
        data = await request.json()  # v5 takes the repository's path in the body beside the owner in the URL
        return await self._created(request, f"{request.path_params['owner']}/{data.get('repo', '')}", data)

    async def _search(self, request: Request) -> Response:
        if (limited := self._limited()) is not None:
            return limited
        repo = request.query_params.get("repo", "")
        words = request.query_params.get("q", "").split()
        state = request.query_params.get("state")
        return JSONResponse([self._item(repo, i) for i in self.issues.get(repo, []) if self._matches(i, words, state)])

    async def _issue(self, request: Request) -> Response:
        if (limited := self._limited()) is not None:
            return limited
        repo = f"{request.path_params['owner']}/{request.path_params['name']}"
        issue = self._find(repo, request.path_params["number"])
        if issue is None:
            return JSONResponse({"message": "404 Not Found"}, status_code=404)
        return JSONResponse(self._item(repo, issue))

    async def _comments(self, request: Request) -> Response:
        repo = f"{request.path_params['owner']}/{request.path_params['name']}"
        issue = self._find(repo, request.path_params["number"])
        return JSONResponse(issue.comments if issue else [], status_code=200 if issue else 404)
