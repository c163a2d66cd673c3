"""Pure parsing of Feishu message events and card actions."""
import json

from adapters.feishu.parse import Skipped, choice_value, parse_card_action, parse_message_event, resolve_mentions
from tests.support.fake_feishu import card_action_event, message_event

BOT = "ou_bot"


def test_group_mention_becomes_a_message_without_the_mention():
    msg = parse_message_event(message_event("vllm-ascend 启动报错", message_id="om_1", event_id="ev_1"), BOT)
    assert not isinstance(msg, Skipped)
    assert msg.text == "vllm-ascend 启动报错"
    assert (msg.platform, msg.workspace, msg.channel) == ("feishu", "tenant1", "oc_chat")
    assert msg.thread == "om_1" and msg.message_id == "om_1" and msg.event_id == "ev_1"
    assert msg.sender == "ou_user" and not msg.is_direct
    assert msg.reply_context == {"reply_to": "om_1", "in_thread": False}


def test_follow_up_in_a_thread_keeps_the_root_as_conversation():
    msg = parse_message_event(message_event("and on 910B?", message_id="om_2", root_id="om_1"), BOT)
    assert msg.thread == "om_1" and msg.reply_context["reply_to"] == "om_2"


def test_topic_group_replies_in_thread():
    msg = parse_message_event(message_event("q", message_id="om_3", root_id="om_1", thread_id="omt_1"), BOT)
    assert msg.reply_context["in_thread"] is True


def test_private_chat_needs_no_mention():
    msg = parse_message_event(message_event("hello", chat_type="p2p", mention_bot=False), BOT)
    assert not isinstance(msg, Skipped) and msg.is_direct and msg.text == "hello"


def test_group_message_without_the_bot_mention_is_skipped():
    other = [{"key": "@_user_1", "id": {"open_id": "ou_alice"}, "name": "Alice"}]
    payload = message_event("@_user_1 look at this", mention_bot=False, extra_mentions=other)
    assert isinstance(parse_message_event(payload, BOT), Skipped)
    assert isinstance(parse_message_event(message_event("plain", mention_bot=False), BOT), Skipped)


def test_group_mention_is_not_trusted_when_the_bot_id_is_unknown():
    assert isinstance(parse_message_event(message_event("hi"), ""), Skipped)


def test_own_and_other_app_messages_are_skipped():
    assert isinstance(parse_message_event(message_event("x", chat_type="p2p", sender_open_id=BOT), BOT), Skipped)
    assert isinstance(parse_message_event(message_event("x", chat_type="p2p", sender_type="app"), BOT), Skipped)


def test_other_placeholders_resolve_to_names_and_user_10_is_not_user_1():
    mentions = [
        {"key": "@_user_1", "id": {"open_id": BOT}, "name": "Copilot"},
        {"key": "@_user_10", "id": {"open_id": "ou_z"}, "name": "Zhang"},
    ]
    text, mentioned = resolve_mentions("@_user_1 ask @_user_10 about @_user_3", mentions, BOT)
    assert mentioned
    assert text == "ask @Zhang about @_user_3"


def test_post_message_is_flattened_with_links_and_code():
    content = {
        "title": "部署问题",
        "content": [
            [{"tag": "at", "user_id": "@_user_1", "user_name": "Copilot"}, {"tag": "text", "text": " 看下这个 "}, {"tag": "a", "text": "issue", "href": "https://github.com/x/y/issues/1"}],
            [{"tag": "code_block", "language": "PYTHON", "text": "import vllm\n"}],
            [{"tag": "img", "image_key": "img_1"}],
        ],
    }
    payload = message_event("", message_type="post", content=content)
    msg = parse_message_event(payload, BOT)
    assert not isinstance(msg, Skipped)
    assert msg.text.startswith("部署问题\n看下这个 [issue](https://github.com/x/y/issues/1)")
    assert "```python\nimport vllm\n```" in msg.text
    assert "Copilot" not in msg.text


def test_post_wrapped_in_a_locale_is_read_too():
    content = {"zh_cn": {"title": "", "content": [[{"tag": "text", "text": "hello"}]]}}
    msg = parse_message_event(message_event("", chat_type="p2p", mention_bot=False, message_type="post", content=content), BOT)
    assert msg.text == "hello"


def test_images_files_and_broken_content_are_skipped():
    assert isinstance(parse_message_event(message_event("", chat_type="p2p", message_type="image", content={"image_key": "k"}), BOT), Skipped)
    broken = message_event("x", chat_type="p2p")
    broken["event"]["message"]["content"] = "{not json"
    assert isinstance(parse_message_event(broken, BOT), Skipped)
    assert isinstance(parse_message_event({"header": {"event_type": "im.message.receive_v1"}}, BOT), Skipped)
    assert isinstance(parse_message_event({}, BOT), Skipped)


def test_card_action_round_trips_the_button_value():
    question = parse_message_event(message_event("MindIE 怎么部署", message_id="om_q", root_id="om_root", thread_id="omt"), BOT)
    value = choice_value("mindie-llm", "MindIE-LLM", question, "zh")
    assert json.loads(json.dumps(value)) == value  # must survive the card JSON
    parsed = parse_card_action(card_action_event(value, open_message_id="om_card", event_id="evc_1"))
    assert not isinstance(parsed, Skipped)
    m = parsed.message
    assert parsed.card_message_id == "om_card" and parsed.language == "zh"
    assert m.choice == "mindie-llm" and m.text == "MindIE-LLM"
    assert m.conversation_key == question.conversation_key
    assert m.reply_context == {"reply_to": "om_q", "in_thread": True}
    assert m.event_id == "evc_1"


def test_foreign_card_actions_are_skipped():
    assert isinstance(parse_card_action(card_action_event({"foo": "bar"}, open_message_id="om_x")), Skipped)
    assert isinstance(parse_card_action({"header": {"event_type": "card.action.trigger"}, "event": {"action": {"value": "str"}}}), Skipped)
