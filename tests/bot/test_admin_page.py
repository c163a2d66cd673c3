"""/admin and `python -m bot report`: who gets in, what they see, and that both show the same numbers."""
from __future__ import annotations

import argparse
import json
import time

import httpx
import pytest

from bot.report import access as access_module
from bot.report.access import AdminAuth
from bot.report.command import cmd_report
from core.messages import ReplyKind
from core.research.redact import Redactor
from tests.support.report_data import StreamIds, message, reply
from tests.support.stack import running_bot

OPERATOR_TOKEN = "operator-token-0123456789abcdef"
T1_TOKEN = "t1-admin-token-0123456789abcdef"
T2_TOKEN = "t2-admin-token-0123456789abcdef"
VOLATILE = ("generated_at", "since", "build_seconds")


def admin_settings(make_settings, **extra):
    return make_settings(admin_token=OPERATOR_TOKEN, admin_tokens={"slack:T1": T1_TOKEN, "slack:T2": T2_TOKEN}, **extra)


async def fill(components) -> None:
    log, ids, now = components.answer_log, StreamIds(), time.time()
    from bot.report.log import record_json  # noqa: PLC0415

    rows = [
        (message("T1 asks about torchair graph cache", workspace="T1"), reply(confidence="low")),
        (message("T1 torchair graph cache again", workspace="T1"), reply(ReplyKind.OUT_OF_SCOPE)),
        (message("T2 private roadmap question", workspace="T2"), reply(ReplyKind.OUT_OF_SCOPE)),
        (message("MindIE 服务化 报错 EZ9999", platform="feishu", workspace="tk"), reply(language="zh", confidence="high")),
    ]
    for i, (msg, rep) in enumerate(rows):
        scope = f"{msg.platform}:{msg.workspace}"
        at = now - 3_600 + i
        await log.append(scope, record_json(msg, rep, latency=1.5 + i, tokens=100 * i, redact=log.redact), at,
                         stream_id=ids.next(scope, at))


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def test_admin_is_off_without_a_token(make_settings):
    async with running_bot(make_settings(), worker=False) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            assert (await http.get("/admin")).status_code == 404


async def test_admin_answers_401_without_the_token_and_the_page_with_it(make_settings):
    async with running_bot(admin_settings(make_settings), worker=False) as stack:
        await fill(stack.components)
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            for headers in ({}, bearer("forged-token-0123456789abcdef"), bearer(OPERATOR_TOKEN[:-1]),
                            {"Authorization": OPERATOR_TOKEN}, {"Authorization": f"Basic {OPERATOR_TOKEN}"}):
                refused = await http.get("/admin", headers=headers)
                assert refused.status_code == 401 and refused.headers["www-authenticate"] == "Bearer"
                assert "torchair" not in refused.text
            page = await http.get("/admin", headers=bearer(OPERATOR_TOKEN))
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    assert page.headers["cache-control"] == "no-store"
    assert page.text.count("<svg") >= 5 and "<script" not in page.text
    assert "torchair" not in page.text and "roadmap" not in page.text  # the operator sees no question text


async def test_a_workspace_token_opens_only_that_workspace_with_its_questions(make_settings):
    async with running_bot(admin_settings(make_settings), worker=False) as stack:
        await fill(stack.components)
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            own = (await http.get("/admin?format=json", headers=bearer(T1_TOKEN))).json()
            page = (await http.get("/admin", headers=bearer(T1_TOKEN))).text
            everyone = (await http.get("/admin?format=json", headers=bearer(OPERATOR_TOKEN))).json()
    assert own["workspaces"] == ["slack:T1"] and own["totals"]["questions"] == 2
    assert "torchair graph cache" in page and "roadmap" not in page and "服务化" not in page
    assert everyone["workspaces"] == ["feishu:tk", "slack:T1", "slack:T2"] and everyone["totals"]["questions"] == 4


async def test_a_bad_window_is_a_clear_400(make_settings):
    async with running_bot(admin_settings(make_settings), worker=False) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            year_and_more = await http.get("/admin?days=400", headers=bearer(OPERATOR_TOKEN))
            words = await http.get("/admin?days=abc", headers=bearer(OPERATOR_TOKEN))
            unauthenticated = await http.get("/admin?days=400")
    assert year_and_more.status_code == 400 and "1 to 366 days" in year_and_more.text
    assert words.status_code == 400 and "whole number" in words.text
    assert unauthenticated.status_code == 401  # the token is checked before anything else


def test_every_configured_token_is_compared_whatever_the_guess(monkeypatch):
    # No early exit: a forged token, the operator's and a workspace's all cost the same comparisons,
    # each one hmac.compare_digest (bot/metrics.bearer_matches).
    import hmac  # noqa: PLC0415

    calls: list[int] = []
    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", lambda a, b: calls.append(1) or real(a, b))
    auth = AdminAuth(OPERATOR_TOKEN, {"slack:T1": T1_TOKEN, "slack:T2": T2_TOKEN})
    for header in (f"Bearer {OPERATOR_TOKEN}", f"Bearer {T1_TOKEN}", "Bearer forged-0123456789abcdef", None):
        calls.clear()
        auth.scope_for(header)
        assert len(calls) == 3, header
    assert auth.scope_for(f"Bearer {T2_TOKEN}").workspaces == frozenset({"slack:T2"})
    assert auth.scope_for(f"Bearer {OPERATOR_TOKEN}") is access_module.OPERATOR


def test_admin_tokens_must_be_long_and_name_a_workspace():
    with pytest.raises(ValueError, match="at least 16"):
        AdminAuth("short", {})
    with pytest.raises(ValueError, match="platform:workspace"):
        AdminAuth("", {"T1": T1_TOKEN})
    assert not AdminAuth("", {}).enabled


def test_admin_tokens_are_redacted_from_logs_and_reports(make_settings):
    redact = Redactor.from_settings(admin_settings(make_settings))
    shown = redact(f"header was Bearer {T1_TOKEN} and {OPERATOR_TOKEN}")
    assert T1_TOKEN not in shown and OPERATOR_TOKEN not in shown


def report_args(**values) -> argparse.Namespace:
    return argparse.Namespace(**{"days": 7, "html": None, "json": False, "workspace": [], **values})


async def test_the_cli_and_the_page_show_the_same_numbers(make_settings, capsys, tmp_path):
    settings = admin_settings(make_settings)
    async with running_bot(settings, worker=False) as stack:
        await fill(stack.components)
        async with httpx.AsyncClient(base_url=stack.base_url) as http:
            page = (await http.get("/admin?format=json&days=7", headers=bearer(OPERATOR_TOKEN))).json()
            own_page = (await http.get("/admin?format=json&days=7", headers=bearer(T1_TOKEN))).json()
        assert await cmd_report(report_args(json=True), settings) == 0
        cli = json.loads(capsys.readouterr().out)
        assert await cmd_report(report_args(json=True, workspace=["slack:T1"]), settings) == 0
        own_cli = json.loads(capsys.readouterr().out)
        html_file = tmp_path / "report.html"
        assert await cmd_report(report_args(html=str(html_file)), settings) == 0
    for a, b in ((page, cli), (own_page, own_cli)):
        assert {k: v for k, v in a.items() if k not in VOLATILE} == {k: v for k, v in b.items() if k not in VOLATILE}
    html = html_file.read_text(encoding="utf-8")
    assert html.count("<svg") >= 5 and "<script" not in html and 'src="http' not in html
    assert "<link" not in html and "Content-Security-Policy" in html  # one file, nothing fetched


async def test_the_cli_refuses_a_window_over_a_year(make_settings, capsys):
    assert await cmd_report(report_args(days=400), make_settings()) == 2
    assert "1 to 366 days" in capsys.readouterr().err
