"""Feishu/Lark adapter: encrypted and signed webhooks or a long connection, card answers.

Modules: crypto (AES/signature/token), envelope (verify one callback), parse
(payload → InboundMessage), inbound (dedupe + enqueue), webhook (routes), ws (long
connection), render + split (Markdown → cards), token + client (Open API),
responder (working card, progress, answer).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.common.config_check import require_valid
from adapters.feishu.settings import FeishuSettings, check_settings

if TYPE_CHECKING:
    from adapters.base import AdapterDeps
    from adapters.feishu.adapter import FeishuAdapter


def create_adapter(deps: "AdapterDeps[FeishuSettings]") -> "FeishuAdapter | None":
    """The adapter, or None when Feishu is not configured; one its check refuses raises PlatformMisconfigured."""
    check = check_settings(deps.settings)
    if not check.enabled:
        return None
    require_valid("feishu", check)
    from adapters.feishu.adapter import FeishuAdapter

    return FeishuAdapter(deps)
