"""`/admin` on `bot web`: the report page for a bearer of ADMIN_TOKEN or a workspace's ADMIN_TOKENS entry.

Off (no route, 404) when neither is set. The token is checked before any Redis work, so a caller
without one costs nothing; `?days=N` picks the window and `?format=json` returns the numbers the
page shows. One report is built at a time per process: the page is for people, not for polling.
"""
from __future__ import annotations

import asyncio
import logging
from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from bot.report.access import AdminAuth
from bot.report.command import DEFAULT_DAYS
from bot.report.data import ReportRangeError, build_report, check_days
from bot.report.page import PAGE_POLICY, render_html

log = logging.getLogger(__name__)

# Nothing on the page runs or loads: no script at all, styles and images only inline.
SECURITY_HEADERS = {
    "Content-Security-Policy": PAGE_POLICY + "; frame-ancestors 'none'",  # frame-ancestors works only as a header
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def admin_route(components: Any) -> Route | None:
    """The /admin route, or None when no admin token is configured."""
    auth = AdminAuth.from_settings(components.settings)
    if not auth.enabled or components.answer_log is None:
        return None
    one_at_a_time = asyncio.Lock()

    async def admin(request: Request) -> Response:
        scope = auth.scope_for(request.headers.get("authorization"))
        if scope is None:
            return PlainTextResponse("unauthorized", status_code=401, headers={"WWW-Authenticate": "Bearer"})
        try:
            days = check_days(int(request.query_params.get("days", DEFAULT_DAYS)))
        except ValueError as exc:  # ReportRangeError is a ValueError too
            reason = str(exc) if isinstance(exc, ReportRangeError) else "days takes a whole number"
            return PlainTextResponse(reason, status_code=400, headers=SECURITY_HEADERS)
        async with one_at_a_time:
            report = await build_report(components.answer_log, components.redis, components.keys, scope, days)
        if request.query_params.get("format") == "json":
            return JSONResponse(report, headers=SECURITY_HEADERS)
        return HTMLResponse(render_html(report), headers=SECURITY_HEADERS)

    return Route("/admin", admin)
