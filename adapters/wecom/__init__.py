"""WeCom (企业微信) AI bot: encrypted callbacks with streamed replies, or the long connection."""
from __future__ import annotations

from adapters.base import AdapterDeps, PlatformAdapter
from adapters.common.config_check import require_valid
from adapters.wecom.settings import WeComSettings, check_settings


def create_adapter(deps: AdapterDeps[WeComSettings]) -> PlatformAdapter | None:
    """None when no WeCom credential is set; one its check refuses raises PlatformMisconfigured
    (token + EncodingAESKey for callbacks, bot id + secret for the long connection)."""
    check = check_settings(deps.settings)
    if not check.enabled:
        return None
    require_valid("wecom", check)
    from .adapter import WeComAdapter  # imported late: unconfigured platforms cost nothing

    return WeComAdapter(deps)
