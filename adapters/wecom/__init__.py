"""WeCom (企业微信) AI bot: encrypted callbacks with streamed replies, or the long connection."""
from __future__ import annotations

from adapters.base import AdapterDeps, PlatformAdapter
from bot.settings import secret


def create_adapter(deps: AdapterDeps) -> PlatformAdapter | None:
    """None unless the chosen mode's credentials are set (token + EncodingAESKey, or bot id + secret)."""
    s = deps.settings
    if s.wecom_mode == "ws":
        if not (s.wecom_bot_id and secret(s.wecom_bot_secret)):
            return None
    elif not (secret(s.wecom_token) and secret(s.wecom_encoding_aes_key)):
        return None
    from .adapter import WeComAdapter  # imported late: unconfigured platforms cost nothing

    return WeComAdapter(deps)
