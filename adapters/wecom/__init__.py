"""WeCom (企业微信) AI bot: encrypted callbacks with streamed replies, or the long connection."""
from __future__ import annotations

from adapters.base import AdapterDeps, PlatformAdapter, PlatformMisconfigured
from adapters.wecom.settings import WeComSettings, credentials_set
from core.secrets import secret


def create_adapter(deps: AdapterDeps[WeComSettings]) -> PlatformAdapter | None:
    """None when no WeCom credential is set; raises when the chosen mode's pair is incomplete
    (token + EncodingAESKey for callbacks, bot id + secret for the long connection)."""
    s = deps.settings
    if not credentials_set(s):
        return None
    if s.wecom_mode == "ws":
        if not (s.wecom_bot_id and secret(s.wecom_bot_secret)):
            raise PlatformMisconfigured("WECOM_MODE=ws needs WECOM_BOT_ID and WECOM_BOT_SECRET")
    elif not (secret(s.wecom_token) and secret(s.wecom_encoding_aes_key)):
        raise PlatformMisconfigured("webhook mode needs WECOM_TOKEN and WECOM_ENCODING_AES_KEY")
    from .adapter import WeComAdapter  # imported late: unconfigured platforms cost nothing

    return WeComAdapter(deps)
