"""Issue 21 (low): /readyz and /metrics are closed when the server binds beyond loopback, unless
METRICS_TOKEN (a bearer) or METRICS_PUBLIC=true opens them; /healthz stays open for probes."""
from __future__ import annotations

import logging

import httpx
import pytest

from bot.metrics import StatusGate, is_loopback
from bot.web import create_app
from bot.wiring import build_components
from tests.support.fake_http import UvicornRunner
from tests.support.stack import running_bot

TOKEN = "status-2b7e151628aed2a6abf7"


async def _get_all(base_url: str, headers: dict[str, str] | None = None) -> dict[str, int]:
    async with httpx.AsyncClient(base_url=base_url) as http:
        return {path: (await http.get(path, headers=headers)).status_code for path in ("/healthz", "/readyz", "/metrics")}


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "copilot.example"])
async def test_beyond_loopback_readyz_and_metrics_are_closed_by_default(make_settings, caplog, host: str) -> None:
    caplog.set_level(logging.WARNING, logger="bot.web")
    async with running_bot(make_settings(host=host), worker=False) as stack:
        statuses = await _get_all(stack.base_url)
    assert statuses == {"/healthz": 200, "/readyz": 403, "/metrics": 403}
    assert any("METRICS_TOKEN" in r.getMessage() and "closed" in r.getMessage() for r in caplog.records)


async def test_the_bound_host_decides_not_only_the_setting(make_settings) -> None:
    """`serve --host 0.0.0.0` with HOST at its loopback default: the address actually bound counts."""
    components = build_components(make_settings())
    runner = UvicornRunner(create_app(components, host="0.0.0.0"))
    await runner.start()
    try:
        statuses = await _get_all(runner.url)
    finally:
        await runner.stop()
        await components.aclose()
    assert statuses == {"/healthz": 200, "/readyz": 403, "/metrics": 403}


async def test_a_token_opens_both_to_its_bearer_only(make_settings) -> None:
    async with running_bot(make_settings(host="0.0.0.0", metrics_token=TOKEN), worker=False) as stack:
        anonymous = await _get_all(stack.base_url)
        wrong = await _get_all(stack.base_url, {"Authorization": f"Bearer {TOKEN}x"})
        right = await _get_all(stack.base_url, {"Authorization": f"Bearer {TOKEN}"})
    assert anonymous == wrong == {"/healthz": 200, "/readyz": 401, "/metrics": 401}
    assert right == {"/healthz": 200, "/readyz": 200, "/metrics": 200}


async def test_metrics_public_opens_them_on_purpose(make_settings) -> None:
    async with running_bot(make_settings(host="0.0.0.0", metrics_public=True), worker=False) as stack:
        assert await _get_all(stack.base_url) == {"/healthz": 200, "/readyz": 200, "/metrics": 200}


async def test_on_loopback_they_stay_open_and_a_token_still_guards_metrics(make_settings) -> None:
    async with running_bot(make_settings(), worker=False) as stack:
        assert await _get_all(stack.base_url) == {"/healthz": 200, "/readyz": 200, "/metrics": 200}
    async with running_bot(make_settings(metrics_token=TOKEN), worker=False) as stack:
        assert await _get_all(stack.base_url) == {"/healthz": 200, "/readyz": 200, "/metrics": 401}


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.8.9.1", True), ("::1", True), ("[::1]", True),
                                                ("localhost", True), ("0.0.0.0", False), ("", False), ("::", False),
                                                ("192.168.1.5", False), ("localhost.example", False)])
def test_loopback_is_decided_by_address(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert StatusGate.for_server(host, "", False).closed is not loopback
