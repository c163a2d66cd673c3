"""Filing an escalation directly through the forge's API (ESCALATE_FILE_DIRECTLY=true).

Off by default: the pre-filled link lets the user file under their own name, which is what most
teams want. With the setting on, the bot files with the token it already holds for `sync --issues`
(GITHUB_TOKEN / GITCODE_TOKEN); a forge without a token, or any API error, falls back to the link.

- GitHub: `POST {GITHUB_API_URL}/repos/{owner}/{name}/issues` with title, body and labels (labels
  are dropped silently by GitHub when the token may not set them).
- GitCode: `POST {GITCODE_API_URL}/repos/{owner}/issues` with `repo`, title, body and labels
  (comma-separated), its v5 API's create-issue call.

The token travels only in the Authorization header, only to the configured API host; a failure is
logged by status and host, never with the request.
"""
from __future__ import annotations

import logging

import httpx

from bot.settings import Settings
from core.escalate import Escalation, IssueFiler
from core.secrets import secret

log = logging.getLogger(__name__)
TIMEOUT_SECONDS = 15.0


class ApiIssueFiler:
    def __init__(self, github_api_url: str, github_token: str, gitcode_api_url: str, gitcode_token: str,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self._hosts = {"github": (github_api_url.rstrip("/"), github_token), "gitcode": (gitcode_api_url.rstrip("/"), gitcode_token)}
        self._transport = transport

    async def file(self, escalation: Escalation) -> str | None:
        api, token = self._hosts[escalation.forge]
        if not token:
            return None
        owner, _, name = escalation.api_repo.partition("/")
        if escalation.forge == "github":
            request = {"url": f"{api}/repos/{owner}/{name}/issues",
                       "json": {"title": escalation.title, "body": escalation.body, "labels": list(escalation.labels)}}
        else:
            request = {"url": f"{api}/repos/{owner}/issues",
                       "json": {"repo": name, "title": escalation.title, "body": escalation.body,
                                "labels": ",".join(escalation.labels)}}
        headers = {"Authorization": f"Bearer {token}", "Accept": "application/json"}
        try:
            async with httpx.AsyncClient(timeout=TIMEOUT_SECONDS, transport=self._transport, follow_redirects=False) as http:
                response = await http.post(headers=headers, **request)
        except httpx.HTTPError as error:
            log.warning("filing an escalation on %s failed: %s", escalation.forge, type(error).__name__)
            return None
        if response.status_code not in (200, 201):
            log.warning("filing an escalation on %s failed: HTTP %s", escalation.forge, response.status_code)
            return None
        try:
            url = str(response.json().get("html_url") or "")
        except (ValueError, AttributeError):
            url = ""
        # Only a link on the forge's own web host is shown: the answer is posted into a chat thread.
        return url if url.startswith(("https://github.com/", "https://gitcode.com/")) else None


def issue_filer(settings: Settings) -> IssueFiler | None:
    """The direct filer when ESCALATE_FILE_DIRECTLY is on and a forge token is set, else None."""
    github, gitcode = secret(settings.github_token), secret(settings.gitcode_token)
    if not settings.escalate_file_directly or not (github or gitcode):
        return None
    return ApiIssueFiler(settings.github_api_url, github, settings.gitcode_api_url, gitcode)
