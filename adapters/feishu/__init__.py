"""Feishu/Lark adapter: encrypted and signed webhooks or a long connection, card answers.

Modules: crypto (AES/signature/token), envelope (verify one callback), parse
(payload → InboundMessage), inbound (dedupe + enqueue), webhook (routes), ws (long
connection), render + split (Markdown → cards), token + client (Open API),
responder (working card, progress, answer).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bot.settings import secret

if TYPE_CHECKING:
    from adapters.base import AdapterDeps
    from adapters.feishu.adapter import FeishuAdapter

log = logging.getLogger(__name__)


def create_adapter(deps: "AdapterDeps") -> "FeishuAdapter | None":
    """The adapter, or None when Feishu is not configured (or misconfigured: logged, never silent)."""
    s = deps.settings
    if not s.feishu_app_id or not secret(s.feishu_app_secret):
        return None
    if s.feishu_mode == "webhook" and not (secret(s.feishu_encrypt_key) and secret(s.feishu_verification_token)):
        # without an Encrypt Key Feishu signs nothing and the token travels in clear: refuse to run open
        log.error("feishu disabled: webhook mode needs FEISHU_ENCRYPT_KEY and FEISHU_VERIFICATION_TOKEN")
        return None
    from adapters.feishu.adapter import FeishuAdapter

    return FeishuAdapter(deps)
