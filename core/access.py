"""Who may use the bot: allowlists of workspaces, channels and users.

Checked at ingress, before anything is queued, so a bot added to a foreign
workspace or group never spends the owner's model budget; feedback clicks are
checked the same way (`allows_actor`).

An entry may name its platform: `telegram:12345` applies only to Telegram,
`slack:T0123` only to Slack. An unqualified entry applies on every platform,
as it always did. For each platform, a list restricts only when at least one
entry applies to that platform, so `ALLOWED_USERS=["telegram:42"]` restricts
Telegram without shutting Slack out.

Closed by default: a chat platform no entry applies to is *open* (anyone who
reaches the bot may use it), and the long-running processes refuse to start
with an open platform unless the operator opened it on purpose (`public`, from
ALLOW_PUBLIC / ALLOW_PUBLIC_PLATFORMS): `refused_platforms`. Every chat platform
counts as reachable from outside: anyone can message a Telegram bot, a Slack app
can be installed by other workspaces and sits in Slack Connect channels, a
Feishu bot can be added to external groups, and the credentials cannot tell us
which deployment this is. The local terminal never goes through this policy.

Organisation boundaries: on Slack and Feishu a message can come from someone
of another organisation (Slack Connect, Feishu external groups) although it is
delivered to, and carries the id of, our own workspace or tenant. There the
workspace list is matched against the sender's own team or tenant
(`InboundMessage.sender_org`), never against the workspace that received it.

Which platforms exist is not core's to know: the names an entry may be qualified with come from the
platform registry (adapters/registry.py) as `PlatformNames`; each entry there also says what its
workspace, channel and user ids are (its close hint).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from core.messages import InboundMessage

TERMINAL = "terminal"  # the local terminal: a name entries may use, never a chat platform of the registry
ANY_PLATFORM = "*"  # in `public`: ALLOW_PUBLIC=1, every platform opened on purpose


@dataclass(frozen=True)
class PlatformNames:
    """The platforms an entry may name, passed in by the composition root from the platform registry
    (adapters/registry.py), so core/ knows no platform by name.

    A prefix that is not one of `names` (or an alias) is part of the value: the entry then matches
    literally on every platform (`unknown_qualifiers` lets start-up warn). `sender_org`: platforms whose
    events say which organisation the *sender* belongs to, apart from the workspace the event was
    delivered to; there the workspace list is matched against that (see the module docstring)."""

    names: frozenset[str] = frozenset()
    aliases: Mapping[str, str] = field(default_factory=dict, hash=False)  # lark → feishu
    sender_org: frozenset[str] = frozenset()

    def resolve(self, name: str) -> str | None:
        """`Lark` → "feishu"; None for a name that is no platform."""
        key = name.strip().lower()
        key = self.aliases.get(key, key)
        return key if key in self.names or key == TERMINAL else None

    def split(self, entry: str) -> tuple[str | None, str]:
        """`telegram:123` → ("telegram", "123"); `T0123` → (None, "T0123")."""
        prefix, sep, rest = entry.partition(":")
        name = self.resolve(prefix)
        if sep and rest.strip() and name is not None:
            return name, rest.strip()
        return None, entry

    def allowlist(self, entries: Iterable[str]) -> "Allowlist":
        return Allowlist.parse(entries, self)

    def policy(
        self, workspaces: Iterable[str], channels: Iterable[str], users: Iterable[str], public: Iterable[str] = ()
    ) -> "AccessPolicy":
        return AccessPolicy(self.allowlist(workspaces), self.allowlist(channels), self.allowlist(users),
                            frozenset(public), self)


@dataclass(frozen=True)
class Allowlist:
    """One list (workspaces, channels or users): entries for every platform, and entries for one."""

    everywhere: frozenset[str] = frozenset()
    per_platform: dict[str, frozenset[str]] = field(default_factory=dict, hash=False)
    raw: tuple[str, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str], platforms: PlatformNames) -> "Allowlist":
        everywhere: set[str] = set()
        per_platform: dict[str, set[str]] = {}
        raw = tuple(e.strip() for e in entries if e and e.strip())
        for entry in raw:
            platform, value = platforms.split(entry)
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
    # platforms the operator opened on purpose (ANY_PLATFORM: all); only start-up reads it
    public: frozenset[str] = frozenset()
    platforms: PlatformNames = PlatformNames()  # what the entries were parsed with (`PlatformNames.policy`)

    def allows(self, message: InboundMessage) -> bool:
        return self.allows_actor(message.platform, message.workspace, message.channel, message.sender, message.sender_org)

    def allows_actor(self, platform: str, workspace: str, channel: str, user: str, user_org: str = "") -> bool:
        """For events that are not questions (feedback clicks): the same rule as for messages.

        `user_org` is the sender's own team/tenant on `PlatformNames.sender_org` platforms; there it, not
        `workspace`, must be in the workspace list, and an unknown one ("") is never admitted by a list that applies."""
        org = user_org if platform in self.platforms.sender_org else workspace
        return (
            self.workspaces.admits(platform, org)
            and self.channels.admits(platform, channel)
            and self.users.admits(platform, user)
        )

    def is_open(self, platform: str) -> bool:
        """True when no entry of any list applies to `platform`: anyone who reaches the bot there may use it."""
        return not any(self.closing_entries(platform).values())

    def open_platforms(self, platforms: Iterable[str]) -> list[str]:
        return [p for p in platforms if self.is_open(p)]

    def closing_entries(self, platform: str) -> dict[str, tuple[str, ...]]:
        """The entries that restrict `platform`, by list ("workspaces", "channels", "users"), as written."""
        found = {}
        for name, lst in (("workspaces", self.workspaces), ("channels", self.channels), ("users", self.users)):
            found[name] = tuple(e for e in lst.raw if self.platforms.split(e)[0] in (None, platform))
        return found

    def opened_on_purpose(self, platform: str) -> bool:
        return ANY_PLATFORM in self.public or platform in self.public

    def refused_platforms(self, platforms: Iterable[str]) -> list[str]:
        """Open platforms the operator did not open on purpose: a process that takes their traffic must not start."""
        return [p for p in self.open_platforms(platforms) if not self.opened_on_purpose(p)]

    def unknown_qualifiers(self) -> list[str]:
        """Entries that look qualified (`name:value`) but name no platform: probably a typo."""
        found = []
        for lst in (self.workspaces, self.channels, self.users):
            for entry in lst.raw:
                prefix, sep, _ = entry.partition(":")
                if sep and prefix and self.platforms.split(entry)[0] is None and prefix.isalpha():
                    found.append(entry)
        return found
