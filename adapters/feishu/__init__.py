"""Feishu/Lark adapter: encrypted and signed webhooks or a long connection, card answers.

Modules: crypto (AES/signature/token), envelope (verify one callback), parse
(payload → InboundMessage), inbound (dedupe + enqueue), webhook (routes), ws (long
connection), render + split (Markdown → cards), token + client (Open API),
responder (working card, progress, answer).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from adapters.base import PlatformMisconfigured
from adapters.feishu.settings import FeishuSettings, credentials_set
from core.secrets import secret

if TYPE_CHECKING:
    from adapters.base import AdapterDeps
    from adapters.feishu.adapter import FeishuAdapter


def create_adapter(deps: "AdapterDeps[FeishuSettings]") -> "FeishuAdapter | None":
    """The adapter, or None when Feishu is not configured; a half-configured one raises."""
    s = deps.settings
    if not credentials_set(s):
        return None
    if not s.feishu_app_id or not secret(s.feishu_app_secret):
        raise PlatformMisconfigured("Feishu needs both FEISHU_APP_ID and FEISHU_APP_SECRET")
    if s.feishu_mode == "webhook" and not (secret(s.feishu_encrypt_key) and secret(s.feishu_verification_token)):
        # without an Encrypt Key Feishu signs nothing and the token travels in clear: refuse to run open
        raise PlatformMisconfigured("webhook mode needs FEISHU_ENCRYPT_KEY and FEISHU_VERIFICATION_TOKEN")
    from adapters.feishu.adapter import FeishuAdapter

    return FeishuAdapter(deps)
