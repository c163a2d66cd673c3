"""`python -m bot digest [--days 7] [--dry-run]`: each opted-in workspace's weekly digest, posted to
the channel DIGEST_CHANNELS names for it (`{"slack:T0123": "C0456"}`); run it weekly from cron.

Each workspace's digest is built from its own report (its own scope: no other team's numbers).
Posting goes through each platform's own sender (bot/report/post.py): Slack `chat.postMessage`,
Feishu's create-message call, Telegram's and WeCom's responders (WeCom over the long connection
only). A workspace whose platform cannot post is reported and the others still post.
"""
from __future__ import annotations

import argparse
import sys
import uuid
from typing import Any

from redis.exceptions import RedisError

from bot.report.access import workspace_scope
from bot.report.cli import answer_log_from, checked_days
from bot.report.data import build_report
from bot.report.digest import digest_text
from bot.report.log import split_scope
from bot.report.post import NotPosted, Place, Poster

DEFAULT_DAYS = 7


def add_parser(sub: Any) -> None:
    digest = sub.add_parser("digest", help="post each opted-in workspace's weekly digest (DIGEST_CHANNELS)")
    digest.add_argument("--days", type=int, default=DEFAULT_DAYS, help=f"the last N days, 1..366 (default {DEFAULT_DAYS})")
    digest.add_argument("--dry-run", action="store_true", help="print each digest instead of posting it")


async def cmd_digest(args: argparse.Namespace, settings: Any) -> int:
    days = checked_days("digest", args.days)
    if days is None:
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
    failed = 0
    try:
        async with answer_log_from(settings) as (answer_log, redis, keys):
            digests = [
                (scope, channel, digest_text(await build_report(answer_log, redis, keys, workspace_scope(scope), days)))
                for scope, channel in sorted(channels.items())
            ]
            if args.dry_run:
                for scope, channel, text in digests:
                    print(f"--- {scope} -> {channel}\n{text}\n")
                return 0
            async with Poster(settings, redis) as poster:
                for scope, channel, text in digests:
                    platform, workspace = split_scope(scope)
                    try:
                        await poster.post(Place(platform, workspace, channel), text, "en", f"digest-{uuid.uuid4().hex}")
                        print(f"digest: posted {scope} -> {channel}", file=sys.stderr)
                    except NotPosted as exc:
                        failed += 1
                        print(f"digest: {scope}: not posted: {exc} (print it with --dry-run)", file=sys.stderr)
    except (RedisError, OSError) as exc:
        print(f"digest: cannot read Redis ({type(exc).__name__})", file=sys.stderr)
        return 1
    return 1 if failed else 0
