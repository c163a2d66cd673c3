"""The slack_sdk AsyncWebClient, pointed at SLACK_API_URL, with 429 handling."""
from __future__ import annotations

from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.settings import SlackSettings
from core.secrets import secret

REQUEST_TIMEOUT_SECONDS = 30
RATE_LIMIT_RETRIES = 3


def api_base_url(url: str) -> str:
    # slack_sdk joins method names onto the base URL, so it must end with "/"
    return url.rstrip("/") + "/"


def build_client(settings: SlackSettings) -> AsyncWebClient:
    return AsyncWebClient(
        token=secret(settings.slack_bot_token),
        base_url=api_base_url(settings.slack_api_url),
        timeout=REQUEST_TIMEOUT_SECONDS,
        # Not on by default in slack_sdk: honour 429 Retry-After instead of failing the post
        retry_handlers=[
            AsyncConnectionErrorRetryHandler(),
            AsyncRateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
        ],
    )
