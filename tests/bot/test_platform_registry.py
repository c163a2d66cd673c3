"""A platform is its folder plus one entry in adapters/registry.py (issue 25 item 6).

A DingTalk-shaped platform that lives in a test package (tests/support/dingtalk) is registered by adding its
one entry, and nothing else is edited: its settings load from the environment, allowlist entries qualified
with its name (or an alias) apply to it, start-up refuses it open and `doctor` names it with its close hint,
its SDK loggers are quietened, and `serve`'s components build its adapter, route its webhook and answer its
users through the real worker. Each test checks the same thing without the entry, so the entry is what does it.
"""
from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from adapters import registry
from bot.access_check import OpenPlatformError, access_policy
from bot.doctor import run_doctor
from bot.logs import configure_logging
from bot.settings import Settings, settings_model
from bot.wiring import build_components, enabled_platforms
from core.messages import InboundMessage, Reply, ReplyKind
from tests.support import dingtalk
from tests.support.stack import jobs_enqueued, running_bot

APP_SECRET = "dingtalk-app-secret"
CREDENTIALS = {"dingtalk_app_key": "ding-app", "dingtalk_app_secret": APP_SECRET}


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The one edit a new platform needs: its entry in the registry."""
    monkeypatch.setattr(registry, "PLATFORMS", (*registry.PLATFORMS, dingtalk.ENTRY))
    yield


@pytest.fixture
def dingtalk_settings(make_settings: Callable[..., Settings]) -> Callable[..., Any]:
    """The test's usual settings (private Redis, tmp dirs), loaded through the model the registry composes now."""

    def build(**overrides: object) -> Any:
        base = make_settings().model_dump()
        return settings_model()(_env_file=None, **{**base, **CREDENTIALS, **overrides})  # type: ignore[call-arg]

    return build


class Idle:
    async def handle(self, message: object, progress: object) -> None:  # never called: nothing is queued
        raise AssertionError


class Echo:
    async def handle(self, message: InboundMessage, progress: Any) -> Reply:
        return Reply(ReplyKind.ANSWER, f"echo: {message.text}", message.language)


def test_its_settings_load_from_the_environment(registered: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DINGTALK_APP_KEY", "ding-app")
    monkeypatch.setenv("DINGTALK_APP_SECRET", APP_SECRET)
    settings = settings_model()(_env_file=None)  # type: ignore[call-arg]
    assert settings.dingtalk_app_key == "ding-app"
    assert settings.dingtalk_app_secret.get_secret_value() == APP_SECRET
    assert APP_SECRET not in repr(settings)
    assert "dingtalk" in enabled_platforms(settings)


def test_without_the_entry_there_is_no_such_platform(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DINGTALK_APP_KEY", "ding-app")
    settings = settings_model()(_env_file=None)  # type: ignore[call-arg]
    assert settings_model() is Settings and not hasattr(settings, "dingtalk_app_key")
    assert "dingtalk" not in enabled_platforms(settings)


def test_allowlist_entries_may_name_it(registered: None, dingtalk_settings: Callable[..., Any]) -> None:
    policy = access_policy(dingtalk_settings(allowed_users=["dingtalk:staff1", "dingding:staff2"]))
    assert policy.closing_entries("dingtalk")["users"] == ("dingtalk:staff1", "dingding:staff2")
    assert policy.allows_actor("dingtalk", "ding-corp", "cid", "staff2")  # the alias is the same platform
    assert not policy.allows_actor("dingtalk", "ding-corp", "cid", "staff9")
    assert policy.is_open("slack") and policy.unknown_qualifiers() == []
    assert access_policy(dingtalk_settings(allow_public_platforms="dingtalk")).opened_on_purpose("dingtalk")


def test_unregistered_its_name_is_a_literal_id(make_settings: Callable[..., Settings]) -> None:
    policy = access_policy(make_settings(allowed_users=["dingtalk:staff1"]))
    assert policy.unknown_qualifiers() == ["dingtalk:staff1"]
    with pytest.raises(ValueError, match="names no chat platform: 'dingtalk'"):
        access_policy(make_settings(allow_public_platforms="dingtalk"))


async def test_start_up_refuses_it_open_with_its_close_hint(registered: None, dingtalk_settings, redis) -> None:
    with pytest.raises(OpenPlatformError) as refused:
        build_components(dingtalk_settings(), redis=redis, conversation=Idle())
    assert str(refused.value).startswith("dingtalk is open to everyone")
    assert dingtalk.ENTRY.close_hint in str(refused.value)


async def test_doctor_names_it(registered: None, dingtalk_settings, capsys: pytest.CaptureFixture[str]) -> None:
    assert await run_doctor(dingtalk_settings()) == 1
    out = capsys.readouterr().out
    assert "[FAIL] access: dingtalk: open to everyone" in out and dingtalk.ENTRY.close_hint in out
    await run_doctor(dingtalk_settings(allowed_workspaces=["dingtalk:ding-corp"]))
    assert "[ok]   access: dingtalk: closed by ALLOWED_WORKSPACES dingtalk:ding-corp" in capsys.readouterr().out


def test_its_sdk_loggers_are_quietened(registered: None) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    sdk = logging.getLogger("dingtalk_stream")
    try:
        configure_logging("DEBUG")
        assert sdk.level == logging.WARNING
    finally:
        root.handlers[:], root.level = handlers, level
        sdk.setLevel(logging.NOTSET)


async def _post(client: httpx.AsyncClient, body: dict[str, Any], secret: str = APP_SECRET) -> int:
    timestamp = str(int(time.time() * 1000))
    headers = {"timestamp": timestamp, "sign": dingtalk.sign(timestamp, secret), "content-type": "application/json"}
    return (await client.post(dingtalk.PATH, content=json.dumps(body), headers=headers)).status_code


async def test_serve_builds_it_and_answers_its_users(registered: None, dingtalk_settings) -> None:
    settings = dingtalk_settings(allowed_users=["dingtalk:staff1"])
    async with running_bot(settings, conversation=Echo()) as stack:
        adapter = stack.components.adapters["dingtalk"]
        async with httpx.AsyncClient(base_url=stack.base_url, timeout=10) as client:
            assert await _post(client, dingtalk.callback("how do I run vllm-ascend?", "m1"), secret="forged") == 401
            assert await _post(client, {"msgId": "m2"}) == 400
            assert await _post(client, dingtalk.callback("hello from a stranger", "m3", staff="staff9")) == 200
            for _ in range(2):  # DingTalk re-sends a callback it did not see acknowledged
                assert await _post(client, dingtalk.callback("how do I run vllm-ascend?", "m4")) == 200
        await stack.wait_idle()
        assert jobs_enqueued(stack.components) == 1
    assert [(m.sender, r.text) for m, r in adapter.replies] == [("staff1", "echo: how do I run vllm-ascend?")]
