"""Issue 21 (low): uvicorn's own loggers go through our redaction filter. Before, uvicorn's default
logging config gave them handlers of their own, so a request line carrying a token was written as is."""
from __future__ import annotations

import asyncio
import logging

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from bot.logs import configure_logging
from bot.server import uvicorn_config
from bot.settings import Settings
from core.research.redact import Redactor
from tests.bot.test_log_redaction import restore_logging  # noqa: F401 - the fixture
from tests.support.fake_http import free_port

SECRET = "webhook-Secret-7Hq2ZpL9"
TELEGRAM = "1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0"


@pytest.mark.parametrize("as_json", [False, True])
def test_a_token_in_a_request_line_is_redacted(as_json: bool, restore_logging: None,  # noqa: F811
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """A real server with the bot's uvicorn config: a request whose URL carries a token fails in the app,
    and uvicorn logs the exception (the URL in its message) through its own error logger."""

    async def boom(request: Request) -> PlainTextResponse:
        raise RuntimeError(f"handler failed for {request.method} {request.url}")

    async def serve_one_failing_request() -> int:
        app = Starlette(routes=[Route("/telegram/webhook", boom)])
        port = free_port()
        server = uvicorn.Server(uvicorn_config(app, Settings(_env_file=None), "127.0.0.1", port))  # type: ignore[call-arg]
        task = asyncio.create_task(server.serve())
        try:
            while not server.started:
                await asyncio.sleep(0.01)
            async with httpx.AsyncClient() as http:
                response = await http.get(f"http://127.0.0.1:{port}/telegram/webhook?secret_token={SECRET}&bot={TELEGRAM}")
            # and a line in uvicorn's access format, as uvicorn writes it when access logs are on
            logging.getLogger("uvicorn.error").info('%s - "%s %s HTTP/%s" %d', "203.0.113.9:5123", "POST",
                                                    f"/telegram/webhook?secret_token={SECRET}", "1.1", 500)
            return response.status_code
        finally:
            server.should_exit = True
            await task

    configure_logging("INFO", as_json=as_json, redact=Redactor([SECRET]))
    assert asyncio.run(serve_one_failing_request()) == 500
    err = capsys.readouterr().err
    assert "Exception in ASGI application" in err and "handler failed for GET" in err  # uvicorn's line, kept
    assert SECRET not in err and TELEGRAM not in err, err
    assert err.count("[redacted]") >= 3, err
