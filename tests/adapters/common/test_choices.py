"""The one clarification-choices store (adapters/common/choices.py) and the platforms that use it."""
from __future__ import annotations

import json
from typing import Any, Callable

from adapters.base import AdapterDeps
from adapters.common.choices import Choice, ChoiceStore
from adapters.telegram.buttons import ButtonStore
from adapters.wecom.adapter import WeComAdapter
from adapters.wecom.store import CardStore
from core.ingress import Ingress
from core.messages import Option

OPTIONS = [("mindie-llm", "MindIE-LLM"), ("vllm-ascend", "vLLM Ascend")]


async def test_a_saved_set_is_picked_by_position_or_by_key(redis, keys) -> None:
    store = ChoiceStore(redis, keys, "telegram", ttl_seconds=60)
    token = await store.save(OPTIONS, "zh", scope={"chat_id": 42}, extra={"question": "启动报错"})
    by_index = await store.pick(token, index=1, scope={"chat_id": 42})
    by_key = await store.pick(token, key="mindie-llm")
    assert by_index is not None and by_index.choice == Choice("vllm-ascend", "vLLM Ascend")
    assert by_key is not None and by_key.choice.label == "MindIE-LLM"
    assert by_index.language == "zh" and by_index.extra == {"question": "启动报错"}


async def test_clicks_that_name_nothing_stored_resolve_to_nothing(redis, keys) -> None:
    store = ChoiceStore(redis, keys, "telegram", ttl_seconds=60)
    token = await store.save(OPTIONS, "en", scope={"chat_id": 42})
    assert await store.pick(token, index=0, scope={"chat_id": 999}) is None  # pressed in another chat
    assert await store.pick(token, index=2) is None and await store.pick(token, index=-1) is None
    assert await store.pick(token, key="not-offered") is None
    assert await store.pick("unknown-token", index=0) is None and await store.pick("", index=0) is None
    assert await store.pick(token) is None  # neither a position nor a key


async def test_the_token_cannot_shape_the_redis_key(redis, keys) -> None:
    store = ChoiceStore(redis, keys, "wecom", ttl_seconds=60)
    hostile = "../../" + "x" * 500 + "*:{}"
    await store.save(OPTIONS, "en", token=hostile)
    [key] = [k async for k in redis.scan_iter(match=f"*{keys.prefix}*choices*")]
    assert hostile not in key.decode() and len(key) < 120
    assert (await store.load(hostile)) is not None


async def test_a_damaged_record_is_treated_as_expired(redis, keys) -> None:
    store = ChoiceStore(redis, keys, "telegram", ttl_seconds=60)
    token = await store.save(OPTIONS, "en")
    [key] = [k async for k in redis.scan_iter(match=f"*{keys.prefix}*choices*")]
    await redis.set(key, json.dumps({"options": "not a list"}))
    assert await store.load(token) is None and await store.pick(token, index=0) is None


async def test_telegram_keyboards_and_wecom_cards_share_the_store(redis, keys) -> None:
    buttons = ButtonStore(redis, keys, ttl_seconds=60)
    markup = await buttons.keyboard(42, tuple(Option(k, l, k) for k, l in OPTIONS), "en")
    data = markup.inline_keyboard[1][0].callback_data
    assert isinstance(data, str)
    _, token, index = data.split(":")
    picked = await ChoiceStore(redis, keys, "telegram", 60).pick(token, index=int(index), scope={"chat_id": 42})
    assert picked is not None and picked.choice.key == "vllm-ascend"

    cards = CardStore(redis, keys, ttl_seconds=60)
    await cards.save("clarify_1", {"options": dict(OPTIONS), "language": "zh", "question": "q", "chat_id": "wrk1"})
    picked = await ChoiceStore(redis, keys, "wecom", 60).pick("clarify_1", key="mindie-llm")
    assert picked is not None and picked.extra == {"question": "q", "chat_id": "wrk1"}
    stored = sorted([k.decode() async for k in redis.scan_iter(match=f"*{keys.prefix}*")])
    assert len(stored) == 2 and all(":choices:" in k for k in stored)  # one layout for both platforms


async def test_choices_live_as_long_as_the_clarification(make_settings: Callable[..., Any], redis, keys) -> None:
    settings = make_settings(clarification_ttl_seconds=777, wecom_token="t", wecom_encoding_aes_key="k" * 43)
    adapter = WeComAdapter(AdapterDeps(settings=settings, redis=redis, ingress=Ingress(redis, keys, 600)))
    await adapter.cards.save("clarify_2", {"options": dict(OPTIONS), "language": "en"})
    [key] = [k async for k in redis.scan_iter(match=f"*{keys.prefix}*choices*")]
    assert 700 < await redis.ttl(key) <= 777
