"""The Open API client and tenant token cache against the local fake Feishu."""
import httpx
import pytest

from adapters.feishu.client import FeishuApi, FeishuApiError
from adapters.feishu.token import FeishuAuthError, TenantToken
from tests.support.fake_feishu import FakeFeishu


@pytest.fixture
async def fake():
    async with FakeFeishu() as f:
        yield f


def api_for(fake: FakeFeishu, secret: str = "app-secret", clock=None) -> tuple[FeishuApi, TenantToken, httpx.AsyncClient]:
    http = httpx.AsyncClient(base_url=fake.url)
    token = TenantToken(http, fake.app_id, secret, **({"clock": clock} if clock else {}))
    return FeishuApi(http, token), token, http


async def test_token_is_fetched_once_and_sent_as_bearer(fake):
    api, token, http = api_for(fake)
    async with http:
        for i in range(3):
            await api.reply("om_1", "text", {"text": f"hi {i}"}, uuid=f"u{i}")
    assert fake.tokens_issued == 1 and token.fetches == 1
    auths = {r.headers["authorization"] for r in fake.server.requests if r.path.endswith("/reply")}
    assert len(auths) == 1 and auths.pop().startswith("Bearer t-1-")


async def test_token_is_refreshed_before_it_expires(fake):
    now = [1000.0]
    api, token, http = api_for(fake, clock=lambda: now[0])
    async with http:
        await api.reply("om_1", "text", {"text": "a"}, uuid="u1")
        now[0] += 7200 - 700  # still fresh: more than the 10-minute margin left
        await api.reply("om_1", "text", {"text": "b"}, uuid="u2")
        assert fake.tokens_issued == 1
        now[0] += 200  # inside the margin: refresh before Feishu would refuse it
        await api.reply("om_1", "text", {"text": "c"}, uuid="u3")
    assert fake.tokens_issued == 2 and fake.token_errors == 0


async def test_a_token_with_almost_no_lifetime_is_fetched_again(fake):
    fake.token_expire = 5
    api, _, http = api_for(fake)
    async with http:
        await api.reply("om_1", "text", {"text": "a"}, uuid="u1")
        await api.reply("om_1", "text", {"text": "b"}, uuid="u2")
    assert fake.tokens_issued == 2 and fake.token_errors == 0


async def test_a_rejected_token_is_refreshed_once_and_the_call_retried(fake):
    api, _, http = api_for(fake)
    async with http:
        await api.reply("om_1", "text", {"text": "a"}, uuid="u1")
        fake.revoke_tokens()  # Feishu-side expiry mid-conversation
        message_id = await api.reply("om_1", "text", {"text": "b"}, uuid="u2")
    assert message_id in fake.messages and fake.token_errors == 1 and fake.tokens_issued == 2


async def test_a_token_that_keeps_failing_raises_after_one_retry(fake, monkeypatch):
    api, token, http = api_for(fake)
    async with http:
        await token.get()
        monkeypatch.setattr(token, "invalidate", lambda _t: None)  # refresh keeps returning the dead token
        fake.revoke_tokens()
        with pytest.raises(FeishuApiError) as err:
            await api.reply("om_1", "text", {"text": "b"}, uuid="u2")
    assert err.value.code == 99991663 and fake.token_errors == 2


async def test_wrong_app_secret_is_a_clear_auth_error(fake):
    api, _, http = api_for(fake, secret="wrong")
    async with http:
        with pytest.raises(FeishuAuthError) as err:
            await api.reply("om_1", "text", {"text": "a"}, uuid="u1")
    assert "wrong" not in str(err.value)  # the secret never lands in an error message


async def test_rate_limit_is_retried(fake):
    api, _, http = api_for(fake)
    async with http:
        fake.rate_limit_next = 2
        message_id = await api.reply("om_1", "text", {"text": "a"}, uuid="u1")
    assert message_id and fake.rate_limit_next == 0
    assert sum(1 for r in fake.server.requests if r.path.endswith("/reply")) == 3


async def test_same_uuid_is_one_message(fake):
    api, _, http = api_for(fake)
    async with http:
        a = await api.reply("om_1", "text", {"text": "a"}, uuid="same")
        b = await api.reply("om_1", "text", {"text": "a"}, uuid="same")
    assert a == b and len(fake.replies_to("om_1")) == 1


async def test_bot_open_id_lookup(fake):
    api, _, http = api_for(fake)
    async with http:
        assert await api.bot_open_id() == "ou_bot"


async def test_content_goes_as_a_json_string_with_thread_flag(fake):
    api, _, http = api_for(fake)
    async with http:
        await api.reply("om_1", "text", {"text": "中文"}, uuid="u1", in_thread=True)
    sent = next(r for r in fake.server.requests if r.path.endswith("/reply")).json
    assert sent == {"msg_type": "text", "content": '{"text":"中文"}', "uuid": "u1", "reply_in_thread": True}
    assert not fake.violations
