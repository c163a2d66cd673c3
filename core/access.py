"""Who may use the bot: allowlists of workspaces, channels and users (empty means everyone).

Checked at ingress, before anything is queued, so a bot added to a foreign
workspace or group never spends the owner's model budget; feedback clicks are
checked the same way (`allows_actor`).

An entry may name its platform: `telegram:12345` applies only to Telegram,
`slack:T0123` only to Slack. An unqualified entry applies on every platform,
as it always did. For each platform, a list restricts only when at least one
entry applies to that platform, so `ALLOWED_USERS=["telegram:42"]` restricts
Telegram without shutting Slack out (start-up warns about every enabled
platform that no entry restricts: `open_platforms`).

What the three ids are on each platform (see each adapter's parser):
  slack     workspace = team id (T…),      channel = channel id (C…/D…/G…), user = user id (U…)
  telegram  workspace = the bot's own id,  channel = chat id (-100… for groups), user = user id
  feishu    workspace = tenant key,        channel = chat id (oc_…),          user = open id (ou_…)
  wecom     workspace = the bot's id,      channel = chat id,                 user = user id
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.messages import InboundMessage

# Platform names an entry may start with. A prefix that is not one of these is part of the value
# (the entry then matches literally on every platform; `unknown_qualifiers` lets start-up warn).
PLATFORM_NAMES: frozenset[str] = frozenset({"slack", "telegram", "feishu", "wecom", "terminal"})
_ALIASES = {"lark": "feishu"}  # Lark is Feishu's international name; the adapter is the same


def _split(entry: str) -> tuple[str | None, str]:
    """`telegram:123` → ("telegram", "123"); `T0123` → (None, "T0123")."""
    prefix, sep, rest = entry.partition(":")
    name = _ALIASES.get(prefix.strip().lower(), prefix.strip().lower())
    if sep and rest.strip() and name in PLATFORM_NAMES:
        return name, rest.strip()
    return None, entry


@dataclass(frozen=True)
class Allowlist:
    """One list (workspaces, channels or users): entries for every platform, and entries for one."""

    everywhere: frozenset[str] = frozenset()
    per_platform: dict[str, frozenset[str]] = field(default_factory=dict, hash=False)
    raw: tuple[str, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> "Allowlist":
        everywhere: set[str] = set()
        per_platform: dict[str, set[str]] = {}
        raw = tuple(e.strip() for e in entries if e and e.strip())
        for entry in raw:
            platform, value = _split(entry)
            (everywhere if platform is None else per_platform.setdefault(platform, set())).add(value)
        return cls(frozenset(everywhere), {p: frozenset(v) for p, v in per_platform.items()}, raw)

    def entries_for(self, platform: str) -> frozenset[str]:
        return self.everywhere | self.per_platform.get(platform, frozenset())

    def admits(self, platform: str, value: str) -> bool:
        entries = self.entries_for(platform)
        return not entries or value in entries


@dataclass(frozen=True)
class AccessPolicy:
    workspaces: Allowlist = Allowlist()
    channels: Allowlist = Allowlist()
    users: Allowlist = Allowlist()

    @classmethod
    def of(cls, workspaces: Iterable[str], channels: Iterable[str], users: Iterable[str]) -> "AccessPolicy":
        return cls(Allowlist.parse(workspaces), Allowlist.parse(channels), Allowlist.parse(users))

    def allows(self, message: InboundMessage) -> bool:
        return self.allows_actor(message.platform, message.workspace, message.channel, message.sender)

    def allows_actor(self, platform: str, workspace: str, channel: str, user: str) -> bool:
        """For events that are not questions (feedback clicks): the same rule as for messages."""
        return (
            self.workspaces.admits(platform, workspace)
            and self.channels.admits(platform, channel)
            and self.users.admits(platform, user)
        )

    def is_open(self, platform: str) -> bool:
        """True when no entry of any list applies to `platform`: anyone who reaches the bot there may use it."""
        return not any(lst.entries_for(platform) for lst in (self.workspaces, self.channels, self.users))

    def open_platforms(self, platforms: Iterable[str]) -> list[str]:
        return [p for p in platforms if self.is_open(p)]

    def unknown_qualifiers(self) -> list[str]:
        """Entries that look qualified (`name:value`) but name no platform: probably a typo."""
        found = []
        for lst in (self.workspaces, self.channels, self.users):
            for entry in lst.raw:
                prefix, sep, _ = entry.partition(":")
                if sep and prefix and _split(entry)[0] is None and prefix.isalpha():
                    found.append(entry)
        return found
