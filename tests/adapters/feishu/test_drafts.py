"""Streamed drafts in Feishu: typed into the CardKit working card, then replaced by the answer."""
from __future__ import annotations

from typing import Any

import httpx
import pytest

from adapters.feishu.client import FeishuApi
from adapters.feishu.parse import parse_message_event
from adapters.feishu.responder import CardKitSwitch, FeishuResponder
from adapters.feishu.token import TenantToken
from core.messages import DRAFT_STAGE, Progress, Reply, ReplyKind
from tests.support.fake_feishu import FakeFeishu, message_event


@pytest.fixture
async def fake() -> Any:
    async with FakeFeishu() as f:
        yield f


@pytest.fixture
async def api(fake: FakeFeishu) -> Any:
    async with httpx.AsyncClient(base_url=fake.url) as http:
        yield FeishuApi(http, TenantToken(http, fake.app_id, fake.app_secret))


def responder(api: FeishuApi, redis: Any, keys: Any, cardkit: bool) -> FeishuResponder:
    message = parse_message_event(message_event("vllm-ascend OOM", message_id="om_q"), "ou_bot")
    return FeishuResponder(api, redis, keys, message, "dr-1", cardkit=CardKitSwitch(cardkit), min_interval=0.0)


async def test_the_draft_streams_into_the_cardkit_card_and_the_answer_replaces_it(fake: Any, api: Any, redis: Any, keys: Any) -> None:
    r = responder(api, redis, keys, cardkit=True)
    await r.progress(Progress("Routing"))
    await r.progress(Progress("Set `max_model", stage=DRAFT_STAGE))
    await r.progress(Progress("Set `max_model_len` lower", stage=DRAFT_STAGE))
    [working] = fake.replies_to("om_q")
    card = fake.cards[working.content["data"]["card_id"]]
    assert [c for _, c in card.streamed][-2:] == ["Set `max_model", "Set `max_model_len` lower"]
    await r.finish(Reply(ReplyKind.ANSWER, "Set `max_model_len` lower (verified).", "en"))
    assert fake.visible_text(working) == "Set `max_model_len` lower (verified)."
    assert len(fake.replies_to("om_q")) == 1 and not fake.violations


async def test_without_cardkit_the_draft_patches_the_working_card(fake: Any, api: Any, redis: Any, keys: Any) -> None:
    fake.cardkit_enabled = False
    r = responder(api, redis, keys, cardkit=True)
    await r.progress(Progress("A draft", stage=DRAFT_STAGE))
    [working] = fake.replies_to("om_q")
    assert fake.visible_text(working) == "A draft"
    await r.finish(Reply(ReplyKind.ANSWER, "The answer.", "en"))
    assert fake.visible_text(working) == "The answer." and len(fake.replies_to("om_q")) == 1
