"""What each API calls an issue, turned into a StoredIssue.

Both listings are walked newest-updated first (sort=updated, direction=desc). That order is what
makes a saved cursor safe to resume: an issue updated while the walk runs moves to page 1,
already read, so later pages only shift by one and repeat an item instead of skipping one; the
moved issue is picked up by the next run because its updated_at is newer than the saved `since`.
GitHub's next page is the Link header's (a cursor on large listings), GitCode's a page number.

GitHub lists pull requests among issues (they carry a `pull_request` key): they are kept as
kind "pull" with their merged flag, because a pull request's body names the issues it fixes and
its merge commit leads to the release that shipped the fix. Comments are fetched for issues that
have any (not for pull requests, whose review chatter resolves nothing): the last few, with each
author's association, so resolution records can tell a maintainer's fix from the reporter's own
"works now". GitCode has no association; core/resolution decides its maintainers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from bot.issues.http import ApiResponse, HostClient
from core.issue_store import IssueComment, StoredIssue, parse_time, utc_iso
from core.research.repos import RepoInfo

MAINTAINER_ROLES = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})


@dataclass(frozen=True)
class Limits:
    page_size: int = 100
    body_chars: int = 20_000
    comment_chars: int = 4_000
    max_comments: int = 10


@dataclass(frozen=True)
class ListedPage:
    items: tuple[dict[str, Any], ...]  # issues and pull requests, raw API objects
    pull_requests: int  # how many of the items are pull requests
    has_next: bool
    next_path: str | None = None  # GitHub: where the Link header says the next page is


class IssueHost(Protocol):
    client: HostClient

    async def list_page(self, repo: RepoInfo, since: str | None, page: int, next_path: str | None = None) -> ListedPage: ...

    async def comments(self, repo: RepoInfo, item: dict[str, Any]) -> tuple[IssueComment, ...]: ...


class BadItem(ValueError):
    """An API object that is not a usable issue (no number, no dates…); skipped and counted."""


def clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n…[truncated {len(text) - limit} characters]"


def item_number(item: dict[str, Any]) -> int:
    raw = item.get("number")
    if isinstance(raw, bool):
        raise BadItem("number")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw.strip())
    raise BadItem("number")


def is_pull_request(item: dict[str, Any]) -> bool:
    return bool(item.get("pull_request")) or item.get("issue_type") == "pull_request"


def _merged(item: dict[str, Any]) -> bool:
    """GitHub's listing says it in pull_request.merged_at; the pulls endpoint and dumps in `merged`."""
    pull = item.get("pull_request")
    if isinstance(pull, dict) and pull.get("merged_at"):
        return True
    return item.get("merged") is True or bool(item.get("merged_at"))


def _split(data: Any) -> tuple[tuple[dict[str, Any], ...], int]:
    if not isinstance(data, list):
        raise BadItem("the listing is not a JSON array")
    objects = tuple(x for x in data if isinstance(x, dict))
    return objects, sum(1 for x in objects if is_pull_request(x))


def _body(item: dict[str, Any], key: str = "body") -> str:
    value = item.get(key)
    return value if isinstance(value, str) else ""


def _login(obj: dict[str, Any]) -> str:
    user = obj.get("user")
    login = user.get("login") if isinstance(user, dict) else None
    return login if isinstance(login, str) else "?"


@dataclass(eq=False)
class _IssueHost:
    """What the issue readers of both hosts hold, and the listing query both take."""

    client: HostClient
    limits: Limits

    def listing_params(self, page: int) -> dict[str, Any]:
        """One page of issues and pull requests, the most recently updated first."""
        return {"state": "all", "sort": "updated", "direction": "desc", "per_page": self.limits.page_size, "page": page}


class GitHubIssues(_IssueHost):
    """Pages are followed through the Link header: on large listings (vLLM has tens of thousands
    of issues and pull requests) GitHub refuses deep `page` numbers with 422 and links to the
    next page with a cursor instead."""

    async def list_page(self, repo: RepoInfo, since: str | None, page: int, next_path: str | None = None) -> ListedPage:
        if next_path:
            response = await self.client.get(next_path)
        else:
            params = self.listing_params(page)
            if since:
                params["since"] = utc_iso(since)  # inclusive: "updated at or after"
            response = await self.client.get(f"/repos/{repo.issue_repo}/issues", params)
        items, prs = _split(response.data)
        following = response.links.get("next")
        return ListedPage(items, prs, following is not None, self.client.relative(following) if following else None)

    async def comments(self, repo: RepoInfo, item: dict[str, Any]) -> tuple[IssueComment, ...]:
        path = f"/repos/{repo.issue_repo}/issues/{item_number(item)}/comments"
        first = await self.client.get(path, {"per_page": 100})
        pages = [first]
        last = _page_of(first.links.get("last"))
        if last is not None and last > 1:  # the closing answer is at the end of a long thread
            pages.append(await self.client.get(path, {"per_page": 100, "page": last}))
        found: list[IssueComment] = []
        for response in pages:
            for c in response.data if isinstance(response.data, list) else []:
                if isinstance(c, dict):
                    found.append(to_comment(c, str(c.get("author_association") or ""), self.limits))
        return keep_comments(found, self.limits.max_comments)


class GitCodeIssues(_IssueHost):

    async def list_page(self, repo: RepoInfo, since: str | None, page: int, next_path: str | None = None) -> ListedPage:
        params = self.listing_params(page)
        if since:
            # GitCode documents an offset timestamp (the "+" URL-encoded, which httpx does).
            params["since"] = parse_time(since).strftime("%Y-%m-%dT%H:%M:%S+00:00")
        response = await self.client.get(f"/repos/{repo.issue_repo}/issues", params)
        items, prs = _split(response.data)
        return ListedPage(items, prs, _gitcode_has_next(response, page, len(items) + prs, self.limits.page_size))

    async def comments(self, repo: RepoInfo, item: dict[str, Any]) -> tuple[IssueComment, ...]:
        path = f"/repos/{repo.issue_repo}/issues/{item_number(item)}/comments"
        response = await self.client.get(path, {"per_page": self.limits.max_comments, "order": "desc"})
        newest_first = [c for c in response.data if isinstance(c, dict)] if isinstance(response.data, list) else []
        return tuple(to_comment(c, "", self.limits) for c in reversed(newest_first))


def to_comment(c: dict[str, Any], association: str, limits: Limits) -> IssueComment:
    created = c.get("created_at")
    try:
        when = utc_iso(created) if isinstance(created, str) and created else ""
    except ValueError:
        when = ""
    return IssueComment(_login(c), association, clip(_body(c), limits.comment_chars), when)


def keep_comments(comments: list[IssueComment], limit: int) -> tuple[IssueComment, ...]:
    """The last `limit` comments, but a maintainer's comment before them is kept in place of the
    oldest non-maintainer one: the fix is often followed by several "me too" lines."""
    if len(comments) <= limit:
        return tuple(comments)
    tail = comments[-limit:]
    earlier_maintainers = [c for c in comments[:-limit] if c.association in MAINTAINER_ROLES]
    while earlier_maintainers and any(c.association not in MAINTAINER_ROLES for c in tail):
        drop = next(i for i, c in enumerate(tail) if c.association not in MAINTAINER_ROLES)
        tail = [*tail[:drop], *tail[drop + 1 :]]
        tail.insert(0, earlier_maintainers.pop())
    return tuple(tail)


def _gitcode_has_next(response: ApiResponse, page: int, count: int, page_size: int) -> bool:
    total = response.headers.get("total_page") or response.headers.get("total-page")
    if total is not None and total.strip().isdigit():
        return page < int(total.strip())
    return count >= page_size


def _page_of(url: str | None) -> int | None:
    if not url:
        return None
    value = httpx.URL(url).params.get("page")
    return int(value) if value and value.isdigit() else None


def wants_comments(item: dict[str, Any]) -> bool:
    if is_pull_request(item):
        return False
    count = item.get("comments")
    return not isinstance(count, int) or count > 0  # unknown count: ask


def _state(item: dict[str, Any]) -> str:
    state = str(item.get("state") or "").lower()
    return "closed" if state in {"closed", "rejected"} else "open"  # GitCode: opened/progressing


def to_stored(repo: RepoInfo, item: dict[str, Any], comments: tuple[IssueComment, ...], limits: Limits) -> StoredIssue:
    number = item_number(item)
    try:
        created = utc_iso(str(item["created_at"]))
        updated = utc_iso(str(item["updated_at"]))
        closed_raw = item.get("closed_at") or item.get("finished_at")
        closed = utc_iso(str(closed_raw)) if closed_raw else None
    except (KeyError, ValueError) as exc:
        raise BadItem(f"dates of #{number}") from exc
    pull = is_pull_request(item)
    # The URL is ours, never the item's: an answer cites it as verified, so it must point at
    # this repository's own thread whatever a host or an import file claims.
    url = f"{repo.web_url}/{'pull' if pull else 'issues'}/{number}"
    labels = tuple(
        str(label["name"]) if isinstance(label, dict) else str(label)
        for label in item.get("labels") or []
        if (isinstance(label, dict) and label.get("name")) or isinstance(label, str)
    )
    title = item.get("title")
    return StoredIssue(
        repo=repo.name,
        number=number,
        url=url,
        title=title.strip()[:500] if isinstance(title, str) else "",
        body=clip(_body(item), limits.body_chars),
        labels=labels,
        state=_state(item),
        created_at=created,
        updated_at=updated,
        closed_at=closed,
        comments=comments,
        author=_login(item) if isinstance(item.get("user"), dict) else "",
        kind="pull" if pull else "issue",
        merged=pull and _merged(item),
    )
