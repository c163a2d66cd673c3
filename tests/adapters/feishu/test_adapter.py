"""create_adapter: when Feishu turns on, and what the adapter declares."""
import pytest

from adapters.base import AdapterDeps, PlatformAdapter, PlatformMisconfigured
from adapters.feishu import create_adapter


def deps(make_settings, **kw) -> AdapterDeps:
    return AdapterDeps(settings=make_settings(**kw), redis=None, ingress=None)  # type: ignore[arg-type]


FULL = dict(feishu_app_id="cli_x", feishu_app_secret="s", feishu_verification_token="v", feishu_encrypt_key="e")


def test_not_configured_means_no_adapter(make_settings):
    assert create_adapter(deps(make_settings)) is None


def test_app_id_without_secret_is_refused_loudly(make_settings):
    with pytest.raises(PlatformMisconfigured, match="FEISHU_APP_SECRET"):
        create_adapter(deps(make_settings, feishu_app_id="cli_x"))


async def test_webhook_mode_without_encrypt_key_is_refused_loudly(make_settings):
    # Without an Encrypt Key Feishu signs nothing and the token travels in clear: never run open.
    with pytest.raises(PlatformMisconfigured, match="FEISHU_ENCRYPT_KEY"):
        create_adapter(deps(make_settings, feishu_app_id="cli_x", feishu_app_secret="s", feishu_verification_token="v"))


async def test_webhook_adapter_has_both_routes_and_declares_cards(make_settings):
    adapter = create_adapter(deps(make_settings, **FULL))
    assert isinstance(adapter, PlatformAdapter)
    assert sorted(r.path for r in adapter.routes()) == ["/feishu/card", "/feishu/events"]
    caps = adapter.capabilities
    assert caps.buttons and caps.edit_messages and caps.max_length == 30 * 1024 and caps.min_edit_interval >= 0.2
    await adapter.stop()


async def test_long_connection_needs_no_webhook_secrets_and_has_no_routes(make_settings):
    adapter = create_adapter(deps(make_settings, feishu_app_id="cli_x", feishu_app_secret="s", feishu_mode="ws"))
    assert adapter is not None and adapter.routes() == []
    await adapter.stop()
