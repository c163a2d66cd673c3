"""Issue 16 (low): /metrics can require a bearer token, and a scrape costs one Redis pipeline at most."""
from __future__ import annotations

import logging
from typing import Any

import httpx
import pytest

from bot.metrics import bearer_matches
from core.messages import InboundMessage
from tests.support.stack import running_bot

TOKEN = "metrics-7f3c9a1e5b2d4c6e8a0b"


def _all_logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(f"{r.getMessage()} {r.args!r} {r.__dict__}" for r in caplog.records)


@pytest.mark.parametrize("header", [None, "", "Bearer", f"Bearer {TOKEN[:-1]}", f"Bearer {TOKEN}x", f"Basic {TOKEN}",
                                    f"bearer{TOKEN}", f"Bearer  {TOKEN}", "Bearer \u00e9".encode()])
async def test_a_scrape_without_the_right_bearer_token_is_401(make_settings, caplog, header: str | bytes | None) -> None:
    caplog.set_level(logging.DEBUG)
    async with running_bot(make_settings(metrics_token=TOKEN), worker=False) as stack:
        headers = {"Authorization": header} if header is not None else {}
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            response = await http.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "copilot_" not in response.text and TOKEN not in response.text
    assert TOKEN not in _all_logged(caplog)


async def test_the_right_token_gets_the_metrics_and_never_reaches_a_log(make_settings, caplog) -> None:
    caplog.set_level(logging.DEBUG)
    async with running_bot(make_settings(metrics_token=TOKEN), worker=False) as stack:
        await stack.components.ingress.submit(InboundMessage("slack", "T", "C", "1", "U", "q", "m", "Ev1", False))
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            response = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
            health = await http.get("/healthz")  # the other endpoints stay open for probes
    assert response.status_code == 200 and health.status_code == 200
    assert "copilot_queue_depth 1.0" in response.text
    assert TOKEN not in _all_logged(caplog)


async def test_without_a_token_configured_metrics_stay_open(make_settings) -> None:
    async with running_bot(make_settings(), worker=False) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            assert (await http.get("/metrics")).status_code == 200


def test_the_bearer_check_is_exact() -> None:
    assert bearer_matches(f"Bearer {TOKEN}", TOKEN)
    assert bearer_matches(f"  Bearer {TOKEN} ", TOKEN)  # surrounding whitespace is not part of the token
    assert not bearer_matches(None, TOKEN) and not bearer_matches(TOKEN, TOKEN)
    assert not bearer_matches(f"Bearer {TOKEN.upper()}", TOKEN)


class _Counting:
    """Counts direct Redis commands and pipelines on a real client."""

    def __init__(self, client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
        self.commands: list[str] = []
        self.pipelines = 0
        real_execute, real_pipeline = client.execute_command, client.pipeline

        async def execute_command(*args: Any, **kwargs: Any) -> Any:
            self.commands.append(str(args[0]))
            return await real_execute(*args, **kwargs)

        def pipeline(*args: Any, **kwargs: Any) -> Any:
            self.pipelines += 1
            return real_pipeline(*args, **kwargs)

        monkeypatch.setattr(client, "execute_command", execute_command)
        monkeypatch.setattr(client, "pipeline", pipeline)


@pytest.mark.parametrize("with_jobs", [False, True])
async def test_a_scrape_is_one_redis_pipeline(make_settings, monkeypatch, with_jobs: bool) -> None:
    async with running_bot(make_settings(metrics_token=TOKEN), worker=False) as stack:
        if with_jobs:
            for i in range(3):
                await stack.components.ingress.submit(InboundMessage("slack", "T", "C", str(i), "U", "q", "m", f"E{i}", False))
        else:
            await stack.redis.delete(stack.keys.jobs)  # no stream at all yet: a fresh deployment
        counting = _Counting(stack.redis, monkeypatch)
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            refused = await http.get("/metrics")
            assert refused.status_code == 401 and counting.pipelines == 0  # a refused scrape costs Redis nothing
            for _ in range(3):
                response = await http.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
                assert response.status_code == 200
    assert counting.commands == [] and counting.pipelines == 3
    assert f"copilot_queue_depth {3.0 if with_jobs else 0.0}" in response.text
