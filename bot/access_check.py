"""Closed by default: the allowlist policy from settings, the start-up refusal and `doctor`'s access lines.

The rule itself (which entries apply, what is open) is core/access.py; this module only says it to the
operator in settings' words (ALLOWED_*, ALLOW_PUBLIC), once for start-up and once for `doctor`.
"""
from __future__ import annotations

import json
import logging

from adapters import registry
from bot.settings import Settings
from core.access import ANY_PLATFORM, TERMINAL, AccessPolicy, Allowlist

log = logging.getLogger(__name__)

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
    known = registry.platform_names()
    for name in names:
        if isinstance(name, str) and not name.strip():
            continue  # "telegram," or an empty setting
        resolved = known.resolve(name) if isinstance(name, str) else None
        if resolved is None or resolved == TERMINAL:
            chat = ", ".join(p.name for p in registry.platforms())
            raise ValueError(f"ALLOW_PUBLIC_PLATFORMS names no chat platform: {name!r} ({chat})")
        public.add(resolved)
    return frozenset(public)


def access_policy(settings: Settings) -> AccessPolicy:
    """The allowlists, their entries qualified by the registered platforms' names."""
    return registry.platform_names().policy(
        settings.allowed_workspaces, settings.allowed_channels, settings.allowed_users, public_platforms(settings)
    )


def experts(settings: Settings) -> Allowlist:
    """Who may `save as answer` (EXPERTS), qualified like the allowlists."""
    return registry.platform_names().allowlist(settings.experts)


def close_hint(name: str) -> str:
    """What to put in an allowlist to close a platform (its registry entry says which ids its messages carry)."""
    entry = registry.platform(name)
    return entry.close_hint if entry is not None and entry.close_hint else f'ALLOWED_USERS=["{name}:<user id>"]'


def _open_line(platform: str) -> str:
    return (
        f"{platform} is open to everyone who can reach the bot: no ALLOWED_WORKSPACES/ALLOWED_CHANNELS/ALLOWED_USERS "
        f"entry applies to it (to close it: {close_hint(platform)})"
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
                                  f"to close it: {close_hint(platform)}"))
        else:
            lines.append(("fail", f"{platform}: open to everyone, so serve/web/worker refuse to start; close it with "
                                  f"{close_hint(platform)}, or set ALLOW_PUBLIC=1 "
                                  f"(or ALLOW_PUBLIC_PLATFORMS={platform}) to run it open on purpose"))
    lines += [("warn", f"allowlist entry {entry!r} names no platform; it is matched as a literal id everywhere")
              for entry in access.unknown_qualifiers()]
    return lines
