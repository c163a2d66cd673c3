"""Who may read the admin report, and what they see (the one place this policy lives).

- ADMIN_TOKEN is the operator's: every workspace's numbers, signatures and thread links, but never
  a question's text (the operator runs the bot; the questions belong to each team).
- ADMIN_TOKENS (`{"slack:T1": "…"}`) gives one workspace's admins their own workspace only, with
  its questions' text.
- Neither set: /admin is off (404).

A presented token is compared with every configured token, each with `hmac.compare_digest`
(bot/metrics.bearer_matches) and without stopping at the first match, so the time taken says
nothing about which token, or how much of one, a guess got right.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bot.metrics import bearer_matches

MIN_TOKEN_CHARS = 16  # an admin token guards people's questions: no short, guessable ones


@dataclass(frozen=True)
class AdminScope:
    workspaces: frozenset[str] | None  # `platform:workspace` entries; None: every workspace
    shows_text: bool  # question text is shown only to a workspace's own admins

    def admits(self, scope: str) -> bool:
        return self.workspaces is None or scope in self.workspaces

    @property
    def label(self) -> str:
        if self.workspaces is None:
            return "all workspaces (operator: no question text)"
        return ", ".join(sorted(self.workspaces))


OPERATOR = AdminScope(None, shows_text=False)


def workspace_scope(*scopes: str) -> AdminScope:
    return AdminScope(frozenset(scopes), shows_text=True)


class AdminAuth:
    def __init__(self, operator_token: str, workspace_tokens: Mapping[str, str]) -> None:
        for name, token in [("ADMIN_TOKEN", operator_token), *((f"ADMIN_TOKENS[{s!r}]", t) for s, t in workspace_tokens.items())]:
            if token and len(token) < MIN_TOKEN_CHARS:
                raise ValueError(f"{name} must be at least {MIN_TOKEN_CHARS} characters")
        for scope in workspace_tokens:
            platform, _, workspace = scope.partition(":")
            if not platform or not workspace:
                raise ValueError(f"ADMIN_TOKENS keys are platform:workspace (like slack:T0123), not {scope!r}")
        self._operator = operator_token
        self._workspaces = {scope: token for scope, token in workspace_tokens.items() if token}

    @classmethod
    def from_settings(cls, settings: Any) -> "AdminAuth":
        operator = settings.admin_token.get_secret_value() if settings.admin_token else ""
        return cls(operator, {s: t.get_secret_value() for s, t in dict(settings.admin_tokens).items()})

    @property
    def enabled(self) -> bool:
        return bool(self._operator or self._workspaces)

    def scope_for(self, authorization: str | None) -> AdminScope | None:
        """The scope the `Authorization` header opens, or None (answer 401)."""
        operator = bool(self._operator) and bearer_matches(authorization, self._operator)
        matched = [scope for scope, token in self._workspaces.items() if bearer_matches(authorization, token)]
        if operator:
            return OPERATOR
        return workspace_scope(*matched) if matched else None
