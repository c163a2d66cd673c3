"""End to end: encrypted, signed callbacks POSTed to the real web app; the worker answers through
the fake Feishu Open API (offline triage, or a scripted conversation where stated)."""
import json
import time

import httpx
import pytest

from adapters.feishu import crypto
from core.messages import Progress, Reply, ReplyKind, Source
from starlette.responses import JSONResponse

from tests.support.fake_feishu import (
    RATE_LIMITED,
    FakeFeishu,
    FakeWsGateway,
    card_action_event,
    message_event,
    post_callback,
    seal,
    url_verification,
)
from tests.support.stack import running_bot, jobs_enqueued

KEY, TOKEN = "e2e-encrypt-key", "v-token"


@pytest.fixture
async def fake():
    async with FakeFeishu() as f:
        yield f


@pytest.fixture
def settings(make_settings, fake):
    def build(**overrides):
        values = dict(
            feishu_app_id=fake.app_id,
            feishu_app_secret=fake.app_secret,
            feishu_verification_token=TOKEN,
            feishu_encrypt_key=KEY,
            feishu_api_url=fake.url,
            feishu_progress_interval_seconds=0.2,
            allowed_workspaces=["feishu:tenant1"],  # closed to the fake tenant's own users
        )
        values.update(overrides)
        return make_settings(**values)

    return build


async def send(stack, payload, path="/feishu/events", **seal_kw):
    body, headers = seal(payload, KEY, **seal_kw)
    return await post_callback(stack.base_url, path, body, headers)


async def queued(stack) -> int:
    return await stack.redis.xlen(stack.keys.jobs)


def answers(fake, message_id):
    return [fake.visible_text(m) for m in fake.replies_to(message_id)]


async def test_group_mention_gets_one_answer_in_a_card(fake, settings):
    async with running_bot(settings()) as stack:  # bot open_id looked up through /bot/v3/info
        r = await send(stack, message_event("vllm-ascend 启动时报 HCCL 超时怎么办", message_id="om_g1"))
        assert r.status_code == 200
        await stack.wait_idle()
    [reply] = fake.replies_to("om_g1")
    assert reply.msg_type == "interactive"
    text = fake.visible_text(reply)
    assert text and "正在处理" not in text  # the working card became the answer
    assert not fake.violations
    assert any(r.path == "/open-apis/bot/v3/info" for r in fake.server.requests)
    # before the answer, a working card (CardKit entity) went out with the core's first progress step
    [created] = [r for r in fake.server.requests if r.path == "/open-apis/cardkit/v1/cards"]
    working = json.loads(created.json["data"])["body"]["elements"][0]["content"]
    assert "正在处理" in working and len(working.splitlines()) >= 2


async def test_private_chat_is_answered_without_a_mention(fake, settings):
    async with running_bot(settings()) as stack:
        await send(stack, message_event("How do I set max_model_len in vllm-ascend?", chat_type="p2p", mention_bot=False, message_id="om_p1"))
        await stack.wait_idle()
    [text] = answers(fake, "om_p1")
    assert "Working on your question" not in text and not fake.violations


async def test_group_message_without_the_mention_is_ignored(fake, settings):
    async with running_bot(settings()) as stack:
        r = await send(stack, message_event("vllm-ascend question for my colleagues", mention_bot=False, message_id="om_n1"))
        assert r.status_code == 200
        await stack.wait_idle()
        assert await queued(stack) == 0
    assert fake.replies_to("om_n1") == []


async def test_duplicate_deliveries_get_one_answer(fake, settings):
    async with running_bot(settings()) as stack:
        event = message_event("vllm-ascend OOM on 910B", message_id="om_d1", event_id="ev_d1")
        assert (await send(stack, event)).status_code == 200
        assert (await send(stack, event)).status_code == 200  # Feishu retry of the same event
        again = message_event("vllm-ascend OOM on 910B", message_id="om_d1", event_id="ev_d2")
        assert (await send(stack, again)).status_code == 200  # same message under a new event id
        await stack.wait_idle()
        assert jobs_enqueued(stack.components) == 1
    assert len(fake.replies_to("om_d1")) == 1


async def test_forged_or_broken_callbacks_are_rejected_and_nothing_is_enqueued(fake, settings):
    async with running_bot(settings()) as stack:
        body, headers = seal(message_event("vllm-ascend q", message_id="om_x1"), KEY)
        bad_sig = await post_callback(stack.base_url, "/feishu/events", body, {**headers, "x-lark-signature": "0" * 64})
        wrong_token = await send(stack, message_event("vllm-ascend q", message_id="om_x2", token="not-ours"))
        garbage = json.dumps({"encrypt": crypto.encrypt("another key", b'{"schema":"2.0"}')}).encode()
        ts = str(int(time.time()))
        undecryptable = await post_callback(
            stack.base_url, "/feishu/events", garbage,
            {"x-lark-request-timestamp": ts, "x-lark-request-nonce": "n", "x-lark-signature": crypto.signature(ts, "n", KEY, garbage)},
        )
        old = str(int(time.time()) - 3600)  # a captured request replayed an hour later: signature valid, too old
        stale = await send(stack, message_event("vllm-ascend q", message_id="om_x3"), timestamp=old)
        huge = await post_callback(stack.base_url, "/feishu/events", b"{" + b" " * (1024 * 1024) + b"}", headers)
        # One answer for every secret-dependent failure (no padding oracle): see test_feishu_no_oracle.py
        assert (bad_sig.status_code, wrong_token.status_code, undecryptable.status_code) == (401, 401, 401)
        assert bad_sig.content == wrong_token.content == undecryptable.content
        assert (stale.status_code, huge.status_code) == (401, 413)
        await stack.wait_idle()
        assert await queued(stack) == 0
    assert fake.messages == {}


async def test_url_verification_plain_and_encrypted(fake, settings):
    async with running_bot(settings()) as stack:
        async with httpx.AsyncClient(base_url=stack.base_url) as client:
            plain = await client.post("/feishu/events", json=url_verification("c-plain", token=TOKEN))
        encrypted = await send(stack, url_verification("c-enc", token=TOKEN), sign=False)
        card_url = await send(stack, url_verification("c-card", token=TOKEN), path="/feishu/card", sign=False)
    assert plain.json() == {"challenge": "c-plain"}
    assert encrypted.json() == {"challenge": "c-enc"}
    assert card_url.json() == {"challenge": "c-card"}


async def ask_ambiguous(stack, fake, message_id):
    await send(stack, message_event("MindIE 报错了，说找不到符号，怎么排查？", message_id=message_id))
    await stack.wait_idle()
    [card] = fake.replies_to(message_id)
    return card


async def test_clarification_by_card_button_resumes_the_question(fake, settings):
    async with running_bot(settings()) as stack:
        card = await ask_ambiguous(stack, fake, "om_c1")
        buttons = fake.buttons(card)
        assert len(buttons) >= 2
        pick = buttons[0]["behaviors"][0]["value"]
        r = await send(stack, card_action_event(pick, open_message_id=card.message_id), path="/feishu/card")
        assert r.status_code == 200 and r.json()["toast"]["type"] == "success"
        again = await send(stack, card_action_event(pick, open_message_id=card.message_id), path="/feishu/card")
        assert again.json()["toast"]["type"] == "info"  # a double click is not a second question
        await stack.wait_idle()
    replies = fake.replies_to("om_c1")
    assert len(replies) == 2
    answer = replies[1]
    assert [b["behaviors"][0]["value"]["key"] for b in fake.buttons(answer)] == ["escalate"]  # only Escalate: the options are gone
    assert pick["label"] in fake.visible_text(answer) or pick["key"] in fake.visible_text(answer)
    assert not fake.violations


async def test_clarification_by_typed_reply_in_the_thread(fake, settings):
    async with running_bot(settings()) as stack:
        card = await ask_ambiguous(stack, fake, "om_t1")
        label = fake.buttons(card)[0]["text"]["content"]
        await send(stack, message_event("1", message_id="om_t2", root_id="om_t1"))
        await stack.wait_idle()
    [answer] = fake.replies_to("om_t2")
    assert [b["behaviors"][0]["value"]["key"] for b in fake.buttons(answer)] == ["escalate"]  # only Escalate: the options are gone
    assert label in fake.visible_text(answer)


class Scripted:
    """A conversation that reports progress and returns a fixed reply (no routing, no model)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.seen: list[str] = []

    async def handle(self, message, progress) -> Reply:
        self.seen.append(message.text)
        await progress(Progress("Searching vllm-ascend issues"))
        await progress(Progress("Reading code"))
        return self.reply


async def test_a_60kb_answer_is_split_into_cards(fake, settings):
    text = "\n\n".join(f"### Step {i}\nCheck `npu-smi info` and the HCCL logs. " + "detail " * 60 for i in range(140))
    assert len(text.encode()) > 60_000
    reply = Reply(ReplyKind.ANSWER, text, "en", sources=(Source("vllm-ascend docs", "https://vllm-ascend.readthedocs.io/"),))
    async with running_bot(settings(), conversation=Scripted(reply)) as stack:
        await send(stack, message_event("long one please", message_id="om_l1"))
        await stack.wait_idle()
    replies = fake.replies_to("om_l1")
    assert len(replies) >= 3
    shown = "\n".join(fake.visible_text(m) for m in replies)
    assert all(f"### Step {i}\n" in shown for i in range(140))
    assert "vllm-ascend.readthedocs.io" in fake.visible_text(replies[-1])
    assert not fake.violations  # nothing over 30 KB, sequences increasing
    # the working card showed the research progress before it became part 1 of the answer
    bodies = [r.body.decode() for r in fake.server.requests if r.path.startswith("/open-apis/cardkit/v1/cards")]
    assert any("Searching vllm-ascend issues" in b for b in bodies)


async def test_token_expiring_mid_conversation_is_refreshed(fake, settings):
    reply = Reply(ReplyKind.ANSWER, "Use `--max-model-len 8192`.", "en")
    async with running_bot(settings(feishu_bot_open_id="ou_bot"), conversation=Scripted(reply)) as stack:
        await send(stack, message_event("first", message_id="om_k1"))
        await stack.wait_idle()
        fake.revoke_tokens()  # the cached token dies on Feishu's side
        await send(stack, message_event("follow-up", message_id="om_k2", root_id="om_k1"))
        await stack.wait_idle()
    assert answers(fake, "om_k2") == ["Use `--max-model-len 8192`."]
    assert fake.token_errors >= 1 and fake.tokens_issued == 2


async def test_card_failure_falls_back_to_a_text_reply(fake, settings):
    fake.refuse_cards = True
    reply = Reply(ReplyKind.ANSWER, "**Fix**: upgrade CANN.", "en")
    async with running_bot(settings(feishu_bot_open_id="ou_bot"), conversation=Scripted(reply)) as stack:
        await send(stack, message_event("cards are broken", message_id="om_f1"))
        await stack.wait_idle()
    [msg] = fake.replies_to("om_f1")
    assert msg.msg_type == "text" and msg.content["text"] == "**Fix**: upgrade CANN."


async def test_long_connection_mode_feeds_the_same_path(fake, settings):
    reply = Reply(ReplyKind.ANSWER, "Answered over the long connection.", "en")
    async with FakeWsGateway() as gateway:
        fake.gateway = gateway
        ws_settings = settings(feishu_mode="ws", feishu_encrypt_key=None, feishu_verification_token=None, feishu_bot_open_id="ou_bot")
        async with running_bot(ws_settings, conversation=Scripted(reply)) as stack:
            code, _ = await gateway.push("event", message_event("hello", message_id="om_w1"))
            assert code == 200
            await stack.wait_idle()
            code, _ = await gateway.push("event", message_event("hello", message_id="om_w1"))  # re-push
            pick = {"aic": "choose", "key": "vllm-ascend", "label": "vllm-ascend", "thread": "om_w1", "reply_to": "om_w1"}
            code, body = await gateway.push("card", card_action_event(pick, open_message_id="om_card"))
            assert code == 200 and body["toast"]["type"] == "success"
            await stack.wait_idle()
            # no webhook routes in ws mode
            async with httpx.AsyncClient(base_url=stack.base_url) as client:
                assert (await client.post("/feishu/events", json={})).status_code in (404, 405)
    replies = fake.replies_to("om_w1")
    assert len(replies) == 2  # the question once (despite the re-push), the button pick once
    assert all(fake.visible_text(m) == "Answered over the long connection." for m in replies)


class ReplyRateLimitedOnce(FakeFeishu):
    """Feishu's gateway refuses the first message reply with the rate-limit code; later replies go through."""

    def __init__(self, status: int) -> None:
        super().__init__()
        self.status = status
        self.reply_uuids: list[str] = []

    async def _reply(self, request):
        self.reply_uuids.append((await request.json()).get("uuid", ""))
        if len(self.reply_uuids) == 1:
            return JSONResponse({"code": RATE_LIMITED, "msg": "request trigger frequency limit"},
                                status_code=self.status, headers={"x-ogw-ratelimit-reset": "1"})
        return await super()._reply(request)


@pytest.mark.parametrize("status", [429, 400])
async def test_rate_limited_reply_is_retried_and_the_answer_arrives_once(make_settings, status):
    reply = Reply(ReplyKind.ANSWER, "Lower `max_num_seqs` to 64.", "en")
    async with ReplyRateLimitedOnce(status) as limited:
        settings = make_settings(
            feishu_app_id=limited.app_id, feishu_app_secret=limited.app_secret, feishu_verification_token=TOKEN,
            feishu_encrypt_key=KEY, feishu_api_url=limited.url, feishu_bot_open_id="ou_bot",
            allowed_workspaces=["feishu:tenant1"],
        )
        async with running_bot(settings, conversation=Scripted(reply)) as stack:
            await send(stack, message_event("910B OOM at warmup", message_id="om_r1"))
            await stack.wait_idle()
            assert not await stack.redis.xlen(stack.keys.dead_letters)
    [answer] = limited.replies_to("om_r1")
    # the same request was retried (same idempotency uuid), not replaced by a fallback plain card
    assert len(limited.reply_uuids) == 2 and limited.reply_uuids[0] == limited.reply_uuids[1] == answer.uuid
    assert answer.content.get("type") == "card" and len(limited.cards) == 1  # the CardKit card, no orphan
    assert limited.visible_text(answer) == "Lower `max_num_seqs` to 64."
    assert not limited.violations
