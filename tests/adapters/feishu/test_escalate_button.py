"""Feishu: an answer card carries the Escalate button; its signed click value parses to the choice."""
from __future__ import annotations

from adapters.feishu.parse import CardChoice, parse_card_action
from core.escalate import ESCALATE_CHOICE
from core.messages import Reply, ReplyKind
from tests.adapters.feishu.test_responder import api, fake, make  # noqa: F401 - fixtures
from tests.support.fake_feishu import card_action_event


async def test_answer_card_has_the_escalate_button_and_its_click_is_the_escalate_choice(fake, api, redis, keys):  # noqa: F811
    reply = Reply(ReplyKind.ANSWER, "**Answer**: upgrade.", "en", repos=("verylucky01/MindIE-LLM",), trace_id="t")
    await make(api, redis, keys).finish(reply)
    [msg] = fake.replies_to("om_q")
    [button] = fake.buttons(msg)
    assert button["text"]["content"] == "📮 Open an upstream issue"
    value = button["behaviors"][0]["value"]
    parsed = parse_card_action(card_action_event(value, open_message_id=msg.message_id))
    assert isinstance(parsed, CardChoice)
    assert parsed.message.choice == ESCALATE_CHOICE and parsed.message.thread == "om_q"
