"""`python -m bot digest [--days 7] [--dry-run]`: each opted-in workspace's weekly digest, posted to
the channel DIGEST_CHANNELS names for it (`{"slack:T0123": "C0456"}`); run it weekly from cron.

Each workspace's digest is built from its own report (its own scope: no other team's numbers).
Posting goes through the platform's existing client; Slack is wired (chat.postMessage with
SLACK_BOT_TOKEN). Telegram, Feishu and WeCom are not yet: their digests print with --dry-run and are
reported as not posted otherwise.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from bot.report.access import workspace_scope
from bot.report.data import ReportRangeError, build_report, check_days
from bot.report.digest import digest_text
from bot.report.limits import LogLimits
from bot.report.log import AnswerLog, split_scope

DEFAULT_DAYS = 7
POSTING_PLATFORMS = ("slack",)


def add_parser(sub: Any) -> None:
    digest = sub.add_parser("digest", help="post each opted-in workspace's weekly digest (DIGEST_CHANNELS)")
    digest.add_argument("--days", type=int, default=DEFAULT_DAYS, help=f"the last N days, 1..366 (default {DEFAULT_DAYS})")
    digest.add_argument("--dry-run", action="store_true", help="print each digest instead of posting it")


async def post_digest(settings: Any, scope: str, channel: str, text: str) -> None:
    """Post `text` to `channel` of the workspace `scope` with the platform's client."""
    platform, _ = split_scope(scope)
    if platform != "slack":
        raise NotImplementedError(f"posting a digest to {platform} is not wired yet")
    from adapters.slack.client import build_client  # noqa: PLC0415 - only when posting

    client = build_client(settings)
    await client.chat_postMessage(channel=channel, text=text, unfurl_links=False, unfurl_media=False)


async def cmd_digest(args: argparse.Namespace, settings: Any) -> int:
    try:
        days = check_days(args.days)
    except ReportRangeError as exc:
        print(f"digest: {exc}", file=sys.stderr)
        return 2
    channels: dict[str, str] = dict(settings.digest_channels)
    if not channels:
        print('digest: no workspace opted in: set DIGEST_CHANNELS={"slack:T0123": "C0456"}', file=sys.stderr)
        return 2
    malformed = [scope for scope in channels if not all(split_scope(scope))]
    if malformed:
        print(f"digest: DIGEST_CHANNELS keys are platform:workspace (like slack:T0123), not {malformed[0]!r}",
              file=sys.stderr)
        return 2
    if not settings.redis_url:
        print("digest: set REDIS_URL to the Redis the bot uses (the answer records live there)", file=sys.stderr)
        return 2
    import redis.asyncio as aioredis  # noqa: PLC0415
    from redis.exceptions import RedisError  # noqa: PLC0415

    from core.keys import Keys  # noqa: PLC0415
    from core.research.redact import Redactor  # noqa: PLC0415

    redis = aioredis.Redis.from_url(settings.redis_url)
    keys = Keys(settings.redis_prefix)
    failed = 0
    try:
        answer_log = AnswerLog(redis, keys, LogLimits.from_settings(settings), Redactor.from_settings(settings))
        for scope, channel in sorted(channels.items()):
            text = digest_text(await build_report(answer_log, redis, keys, workspace_scope(scope), days))
            if args.dry_run:
                print(f"--- {scope} -> {channel}\n{text}\n")
                continue
            try:
                await post_digest(settings, scope, channel, text)
                print(f"digest: posted {scope} -> {channel}", file=sys.stderr)
            except NotImplementedError as exc:
                failed += 1
                print(f"digest: {scope}: {exc} (print it with --dry-run)", file=sys.stderr)
            except Exception as exc:  # noqa: BLE001 - one workspace's failure must not stop the others
                failed += 1
                print(f"digest: {scope}: could not post ({type(exc).__name__})", file=sys.stderr)
    except (RedisError, OSError) as exc:
        print(f"digest: cannot read Redis ({type(exc).__name__})", file=sys.stderr)
        return 1
    finally:
        await redis.aclose()
    return 1 if failed else 0
