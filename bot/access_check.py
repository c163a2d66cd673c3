"""Closed by default: the allowlist policy from settings, the start-up refusal and `doctor`'s access lines.

The rule itself (which entries apply, what is open) is core/access.py; this module only says it to the
operator in settings' words (ALLOWED_*, ALLOW_PUBLIC), once for start-up and once for `doctor`.
"""
from __future__ import annotations

import json
import logging

from bot.settings import Settings
from core.access import ANY_PLATFORM, AccessPolicy, platform_name

log = logging.getLogger(__name__)

# What to put in an allowlist to close each platform (the ids its messages carry; see core/access.py).
CLOSE_HINT = {
    "slack": 'ALLOWED_WORKSPACES=["slack:T…"] (your team id) or ALLOWED_USERS=["slack:U…"]',
    "telegram": 'ALLOWED_USERS=["telegram:<user id>"] or ALLOWED_CHANNELS=["telegram:<chat id>"]',
    "feishu": 'ALLOWED_WORKSPACES=["feishu:<tenant key>"] or ALLOWED_USERS=["feishu:ou_…"]',
    "wecom": 'ALLOWED_USERS=["wecom:<user id>"] or ALLOWED_CHANNELS=["wecom:<chat id>"]',
}
_LIST_SETTING = {"workspaces": "ALLOWED_WORKSPACES", "channels": "ALLOWED_CHANNELS", "users": "ALLOWED_USERS"}


class OpenPlatformError(ValueError):
    """A platform anyone may use is enabled and was not opened on purpose: the process does not start."""


def public_platforms(settings: Settings) -> frozenset[str]:
    """ALLOW_PUBLIC=1 opens every platform; ALLOW_PUBLIC_PLATFORMS=telegram,slack (or a JSON list) names some.
    A name that is no platform is a configuration error: a typo must not leave the operator guessing."""
    raw = settings.allow_public_platforms.strip()
    try:
        names = json.loads(raw) if raw.startswith("[") else raw.split(",")
    except ValueError:
        names = None
    if not isinstance(names, list):
        raise ValueError("ALLOW_PUBLIC_PLATFORMS takes platform names: telegram,slack (or a JSON list)")
    public = {ANY_PLATFORM} if settings.allow_public else set()
    for name in names:
        if isinstance(name, str) and not name.strip():
            continue  # "telegram," or an empty setting
        platform = platform_name(name) if isinstance(name, str) else None
        if platform is None or platform == "terminal":
            raise ValueError(f"ALLOW_PUBLIC_PLATFORMS names no chat platform: {name!r} (slack, telegram, feishu, wecom)")
        public.add(platform)
    return frozenset(public)


def access_policy(settings: Settings) -> AccessPolicy:
    return AccessPolicy.of(
        settings.allowed_workspaces, settings.allowed_channels, settings.allowed_users, public_platforms(settings)
    )


def _open_line(platform: str) -> str:
    return (
        f"{platform} is open to everyone who can reach the bot: no ALLOWED_WORKSPACES/ALLOWED_CHANNELS/ALLOWED_USERS "
        f"entry applies to it (to close it: {CLOSE_HINT.get(platform, f'{platform}:<id>')})"
    )


def check_access(access: AccessPolicy, platforms: list[str]) -> list[str]:
    """Before a process that takes platform traffic starts: raise OpenPlatformError (one line) for an open
    platform not opened on purpose; log and return one warning per platform opened on purpose and per
    misspelt platform name in an allowlist."""
    refused = access.refused_platforms(platforms)
    if refused:
        raise OpenPlatformError(
            "; ".join(_open_line(p) for p in refused)
            + f". Refusing to start: set an allowlist, or ALLOW_PUBLIC=1 (ALLOW_PUBLIC_PLATFORMS={','.join(refused)}) "
            "to run it open on purpose"
        )
    lines = [_open_line(p) + " (opened on purpose by ALLOW_PUBLIC)" for p in access.open_platforms(platforms)]
    lines += [
        f"allowlist entry {entry.split(':', 1)[0]!r}:… names no platform; it is matched as a literal id on every platform"
        for entry in access.unknown_qualifiers()
    ]
    for line in lines:
        log.warning("%s", line)
    return lines


def doctor_lines(access: AccessPolicy, platforms: list[str]) -> list[tuple[str, str]]:
    """(status, text) per enabled platform: "ok" closed (by which entries), "warn" open on purpose, "fail" open
    (serve/web/worker refuse to start); plus a "warn" per misspelt platform name in an allowlist."""
    lines: list[tuple[str, str]] = []
    for platform in platforms:
        entries = access.closing_entries(platform)
        if not access.is_open(platform):
            by = "; ".join(f"{_LIST_SETTING[name]} {', '.join(found)}" for name, found in entries.items() if found)
            lines.append(("ok", f"{platform}: closed by {by}"))
        elif access.opened_on_purpose(platform):
            lines.append(("warn", f"{platform}: OPEN to everyone who can reach the bot (ALLOW_PUBLIC); "
                                  f"to close it: {CLOSE_HINT.get(platform, f'{platform}:<id>')}"))
        else:
            lines.append(("fail", f"{platform}: open to everyone, so serve/web/worker refuse to start; close it with "
                                  f"{CLOSE_HINT.get(platform, f'{platform}:<id>')}, or set ALLOW_PUBLIC=1 "
                                  f"(or ALLOW_PUBLIC_PLATFORMS={platform}) to run it open on purpose"))
    lines += [("warn", f"allowlist entry {entry!r} names no platform; it is matched as a literal id everywhere")
              for entry in access.unknown_qualifiers()]
    return lines
