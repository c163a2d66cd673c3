"""The platform guides (docs/platforms.md, docs/zh/platforms.md) name every setting each platform
reads and no setting that does not exist, and the `.env` blocks of the Chinese guide start their
platform as written: a reader who copies them gets a bot that starts, in the mode the guide says."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from adapters.base import AdapterDeps
from adapters.common.settings import AdapterSettings
from adapters.feishu.settings import FeishuSettings
from adapters.slack.settings import SlackSettings
from adapters.telegram.settings import TelegramSettings
from adapters.wecom.settings import WeComSettings
from bot.settings import Settings
from bot.wiring import build_adapters
from core.ingress import Ingress

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "docs" / "platforms.md", ROOT / "docs" / "zh" / "platforms.md"]
PLATFORM_SETTINGS = {"slack": SlackSettings, "telegram": TelegramSettings, "feishu": FeishuSettings, "wecom": WeComSettings}
PLATFORM_VARIABLE = re.compile(r"\b(?:SLACK|TELEGRAM|FEISHU|WECOM)_[A-Z0-9_]+\b")
DOTENV_BLOCK = re.compile(r"```dotenv\n(.*?)```", re.S)
BLOCK_PLATFORM = {"飞书": "feishu", "企业微信": "wecom", "Slack": "slack", "Telegram": "telegram"}


def own_variables(model: type[AdapterSettings]) -> set[str]:
    """The environment variables a platform's settings class adds to the shared ones."""
    return {name.upper() for name in set(model.model_fields) - set(AdapterSettings.model_fields)}


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_guide_names_every_setting_of_every_platform(guide: Path):
    text = guide.read_text(encoding="utf-8")
    missing = {platform: sorted(v for v in own_variables(model) if f"`{v}`" not in text)
               for platform, model in PLATFORM_SETTINGS.items()}
    assert missing == {platform: [] for platform in PLATFORM_SETTINGS}


@pytest.mark.parametrize("guide", GUIDES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_guide_invents_no_setting(guide: Path):
    known = {name.upper() for name in Settings.model_fields}
    named = set(PLATFORM_VARIABLE.findall(guide.read_text(encoding="utf-8")))
    assert named and sorted(named - known) == []


def dotenv_blocks() -> list[tuple[str, dict[str, str]]]:
    """(title, variables) of each ```dotenv block in the Chinese guide; the title is its first comment."""
    blocks = []
    for body in DOTENV_BLOCK.findall((ROOT / "docs" / "zh" / "platforms.md").read_text(encoding="utf-8")):
        lines = [line.strip() for line in body.splitlines() if line.strip()]
        title = lines[0].lstrip("# ").strip()
        values = dict(line.split("=", 1) for line in lines[1:] if not line.startswith("#"))
        blocks.append((title, values))
    return blocks


def test_the_chinese_guide_has_a_block_for_each_way_in():
    titles = [title for title, _ in dotenv_blocks()]
    assert titles == ["飞书 · 长连接", "飞书 · Webhook", "企业微信 · 长连接", "企业微信 · API 模式",
                      "Slack · Socket Mode", "Telegram · 长轮询"]


@pytest.mark.parametrize(("title", "values"), dotenv_blocks(), ids=[title for title, _ in dotenv_blocks()])
async def test_each_env_block_of_the_chinese_guide_starts_its_platform_in_its_mode(
    title: str, values: dict[str, str], make_settings, redis, keys, monkeypatch: pytest.MonkeyPatch
):
    for name in list(os.environ):
        if PLATFORM_VARIABLE.fullmatch(name):
            monkeypatch.delenv(name)  # only the block's own values count
    settings = make_settings(**{k.lower(): v for k, v in values.items()})
    platform = BLOCK_PLATFORM[title.split(" · ")[0]]
    adapters = build_adapters(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
    assert set(adapters) == {platform}
    mode = {"长连接": "ws", "Webhook": "webhook", "API 模式": "webhook"}.get(title.split(" · ")[1])
    if mode is not None:
        assert getattr(settings, f"{platform}_mode") == mode
