import time

from core.access import AccessPolicy, PlatformNames
from core.ingress import Ingress, SubmitOutcome
from core.limits import BudgetState, RateLimiter, TokenBudget
from core.messages import InboundMessage

NAMES = PlatformNames()  # unqualified entries only: no platform names needed


async def test_user_limit_allows_exactly_n_then_tells_once(redis, keys):
    limiter = RateLimiter(redis, keys, per_user_hour=3, per_channel_hour=100)
    verdicts = [await limiter.check("slack", "C1", "U1") for _ in range(5)]
    assert [v.allowed for v in verdicts] == [True, True, True, False, False]
    assert verdicts[3].first_refusal and not verdicts[4].first_refusal
    assert 0 < verdicts[3].retry_after_seconds <= 3600
    assert (await limiter.check("slack", "C1", "U2")).allowed  # other users are not affected


async def test_channel_limit_counts_every_user(redis, keys):
    limiter = RateLimiter(redis, keys, per_user_hour=100, per_channel_hour=2)
    assert (await limiter.check("slack", "C1", "U1")).allowed
    assert (await limiter.check("slack", "C1", "U2")).allowed
    assert not (await limiter.check("slack", "C1", "U3")).allowed
    assert (await limiter.check("slack", "C2", "U3")).allowed


async def test_a_new_window_resets_the_count(redis, keys):
    limiter = RateLimiter(redis, keys, per_user_hour=1, per_channel_hour=100, window=1)
    assert (await limiter.check("slack", "C1", "U1")).allowed
    assert not (await limiter.check("slack", "C1", "U1")).allowed
    time.sleep(1.05 - (time.time() % 1))  # cross into the next one-second window
    assert (await limiter.check("slack", "C1", "U1")).allowed


async def test_token_budget(redis, keys):
    budget = TokenBudget(redis, keys, daily_limit=1000)
    first = await budget.reserve("slack:T:U1")
    assert first.state is BudgetState.OPEN
    await budget.settle(first, 600)
    second = await budget.reserve("slack:T:U1")
    await budget.settle(second, 400)
    assert (await budget.reserve("slack:T:U1")).state is BudgetState.ALL_SPENT
    assert (await TokenBudget(redis, keys, daily_limit=0).reserve("slack:T:U1")).state is BudgetState.OPEN  # 0: unlimited


def test_access_policy():
    m = InboundMessage("slack", "T1", "C1", "1", "U1", "q", "m", "e", False, sender_org="T1")
    assert AccessPolicy().allows(m)
    assert NAMES.policy(["T1"], [], []).allows(m)
    assert not NAMES.policy(["T2"], [], []).allows(m)
    assert not NAMES.policy([], ["C9"], []).allows(m)
    assert not NAMES.policy([], [], ["U9"]).allows(m)
    assert NAMES.policy(["T1"], ["C1"], ["U1"]).allows(m)


async def test_ingress_drops_messages_outside_the_allowlist(redis, keys):
    ingress = Ingress(redis, keys, 60, NAMES.policy(["T-mine"], [], []))
    foreign = InboundMessage("slack", "T-foreign", "C1", "1", "U1", "q", "m", "e", False)
    assert (await ingress.submit(foreign)).outcome is SubmitOutcome.NOT_ALLOWED
    assert not await redis.exists(keys.jobs)
