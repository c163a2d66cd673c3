"""Who may use the bot: allowlists of workspaces, channels and users (empty means everyone).

Checked at ingress, before anything is queued, so a bot added to a foreign
workspace or group never spends the owner's model budget.
"""
from __future__ import annotations

from dataclasses import dataclass

from core.messages import InboundMessage


@dataclass(frozen=True)
class AccessPolicy:
    workspaces: frozenset[str] = frozenset()
    channels: frozenset[str] = frozenset()
    users: frozenset[str] = frozenset()

    @classmethod
    def of(cls, workspaces: list[str], channels: list[str], users: list[str]) -> "AccessPolicy":
        return cls(frozenset(workspaces), frozenset(channels), frozenset(users))

    def allows(self, message: InboundMessage) -> bool:
        return (
            (not self.workspaces or message.workspace in self.workspaces)
            and (not self.channels or message.channel in self.channels)
            and (not self.users or message.sender in self.users)
        )
