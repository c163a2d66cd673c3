"""Every chat platform, one entry each: the facts the rest of the bot reads about it.

A platform is its folder (adapters/<name>/: `create_adapter(deps)` in its `__init__`, its settings model
in `settings.py`) plus one `Platform` entry here. Everything else reads the entry: bot.settings composes
the settings models, the composition root builds the adapters whose credentials are set, `doctor` and start-up
run its settings check, the access policy learns which names an allowlist entry may be qualified
with (core/ never imports a platform: it gets them as `PlatformNames`), start-up and `doctor` say how to
close an open platform, and logging quietens the platform SDKs' loggers.

Importing this module must stay light: it loads each platform's settings model and dedupe ids, never
an SDK (tests/bot/test_layering.py checks that reading settings loads none).
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from adapters.common.settings import AdapterSettings
from adapters.feishu.dedupe import FeishuDedupeIds
from adapters.feishu.settings import FeishuSettings
from adapters.feishu.settings import credentials_set as feishu_credentials_set
from adapters.slack.dedupe import SlackDedupeIds
from adapters.slack.settings import SlackSettings
from adapters.slack.settings import credentials_set as slack_credentials_set
from adapters.telegram.dedupe import TelegramDedupeIds
from adapters.telegram.settings import TelegramSettings
from adapters.telegram.settings import credentials_set as telegram_credentials_set
from adapters.wecom.dedupe import WeComDedupeIds
from adapters.wecom.settings import WeComSettings
from adapters.wecom.settings import credentials_set as wecom_credentials_set
from core.access import PlatformNames


@dataclass(frozen=True)
class Platform:
    """One chat platform, as the rest of the bot sees it."""

    name: str  # the prefix of its allowlist entries, its Redis namespace, its log and metric label
    settings: type[AdapterSettings]  # its environment variables; bot.settings.Settings inherits it
    credentials_set: Callable[[Any], bool]  # any credential set: the operator meant to run it
    close_hint: str  # what to put in an allowlist to close it (the ids its messages carry)
    dedupe_ids: type  # its dedupe ids beside the event id (adapters/<name>/dedupe.py)
    sdk_loggers: tuple[str, ...] = ()  # its SDKs' loggers, which log full URLs (tokens): WARNING and up only
    aliases: tuple[str, ...] = ()  # other names an allowlist entry may use for it
    # its events name the sender's own organisation (Slack Connect, Feishu external groups): the
    # workspace list is matched against that, never against the workspace that received the event
    sender_org: bool = False
    package: str = ""  # where `create_adapter` lives; "" is adapters.<name>

    @property
    def module(self) -> str:
        return self.package or f"adapters.{self.name}"

    @property
    def check(self) -> Callable[[Any], Any] | None:
        """`check_settings` of its settings module (adapters/common/config_check.py), where it has one: the
        mode the values select and what is missing or invalid, the same checks for `serve` and `doctor`."""
        return getattr(importlib.import_module(self.settings.__module__), "check_settings", None)

    def create_adapter(self, deps: Any) -> Any:
        """The adapter, or None when its credentials are unset; imports its folder only now, so an
        unconfigured platform costs nothing (ImportError and PlatformMisconfigured go to the caller)."""
        return importlib.import_module(self.module).create_adapter(deps)


PLATFORMS: tuple[Platform, ...] = (
    Platform(
        name="slack",
        settings=SlackSettings,
        credentials_set=slack_credentials_set,
        close_hint='ALLOWED_WORKSPACES=["slack:T…"] (your team id) or ALLOWED_USERS=["slack:U…"]',
        dedupe_ids=SlackDedupeIds,
        sdk_loggers=("slack_sdk", "slack_bolt"),
        sender_org=True,
    ),
    Platform(
        name="telegram",
        settings=TelegramSettings,
        credentials_set=telegram_credentials_set,
        close_hint='ALLOWED_USERS=["telegram:<user id>"] or ALLOWED_CHANNELS=["telegram:<chat id>"]',
        dedupe_ids=TelegramDedupeIds,
        sdk_loggers=("telegram",),
    ),
    Platform(
        name="feishu",
        settings=FeishuSettings,
        credentials_set=feishu_credentials_set,
        close_hint='ALLOWED_WORKSPACES=["feishu:<tenant key>"] or ALLOWED_USERS=["feishu:ou_…"]',
        dedupe_ids=FeishuDedupeIds,
        sdk_loggers=("lark_oapi",),
        aliases=("lark",),  # Lark is Feishu's international name; the adapter is the same
        sender_org=True,
    ),
    Platform(
        name="wecom",
        settings=WeComSettings,
        credentials_set=wecom_credentials_set,
        close_hint='ALLOWED_USERS=["wecom:<user id>"] or ALLOWED_CHANNELS=["wecom:<chat id>"]',
        dedupe_ids=WeComDedupeIds,
    ),
)


def platforms() -> tuple[Platform, ...]:
    """The registered platforms, read at each call (a test may register a fake one)."""
    return PLATFORMS


def platform(name: str) -> Platform | None:
    return next((p for p in platforms() if p.name == name), None)


def platform_names(entries: Iterable[Platform] | None = None) -> PlatformNames:
    """What core's access policy may know of the platforms: their names, aliases and which name the sender's org."""
    found = tuple(platforms() if entries is None else entries)
    return PlatformNames(
        names=frozenset(p.name for p in found),
        aliases={alias: p.name for p in found for alias in p.aliases},
        sender_org=frozenset(p.name for p in found if p.sender_org),
    )
