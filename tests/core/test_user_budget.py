"""Per-user daily token budgets on a real Redis: one user cannot spend the day for everyone."""
from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from core.conversation import Conversation
from core.limits import BudgetState, TokenBudget
from core.messages import InboundMessage, ReplyKind
from core.session import RedisSessionStore


@dataclass
class Usage:
    input: int = 400
    output: int = 200
    cache_write: int = 0
    cache_read: int = 0


@dataclass
class Outcome:
    ok: bool = True
    text: str = "MODEL ANSWER: set ASCEND_RT_VISIBLE_DEVICES before starting vllm."
    sources: tuple = ()
    trace: tuple = ()
    usage: Usage = field(default_factory=Usage)
    error: str = ""


class CountingResearcher:
    def __init__(self) -> None:
        self.calls = 0

    async def answer(self, request: object, progress: object) -> Outcome:
        self.calls += 1
        return Outcome()


def ask(text: str, sender: str, thread: str, platform: str = "telegram", workspace: str = "bot1") -> InboundMessage:
    return InboundMessage(platform, workspace, "chat1", thread, sender, text, thread, thread, True)


async def spend(budget: TokenBudget, user: str, tokens: int) -> BudgetState:
    """One answer's whole bookkeeping: reserve, then settle with what it used."""
    held = await budget.reserve(user)
    await budget.settle(held, tokens)
    return held.state


async def test_spend_counts_per_user_and_shared(redis, keys) -> None:
    budget = TokenBudget(redis, keys, daily_limit=10_000, user_daily_limit=1000)
    assert await spend(budget, "telegram:b:alice", 600) is BudgetState.OPEN
    assert await spend(budget, "telegram:b:alice", 400) is BudgetState.OPEN
    assert await spend(budget, "telegram:b:alice", 1) is BudgetState.USER_SPENT  # 1000: the cap exactly
    assert await spend(budget, "telegram:b:bob", 9000) is BudgetState.OPEN  # others are unaffected
    assert int(await redis.get(keys.tokens_today(time.strftime("%Y-%m-%d", time.gmtime())))) == 10_000
    assert await spend(budget, "telegram:b:carol", 1) is BudgetState.ALL_SPENT
    # 0 means no per-user cap: only the shared budget counts
    uncapped = TokenBudget(redis, keys, daily_limit=0, user_daily_limit=0)
    assert (await uncapped.reserve("telegram:b:alice")).state is BudgetState.OPEN


async def test_counters_expire_and_concurrent_settlements_are_not_lost(redis, keys) -> None:
    budget = TokenBudget(redis, keys, daily_limit=0, user_daily_limit=5000, reserve=10)
    for _ in range(4):  # concurrent answers of one user, each reserving and settling
        await asyncio.gather(*(spend(budget, "slack:T1:U1", 10) for _ in range(50)))
    assert await spend(budget, "slack:T1:U1", 3000) is BudgetState.OPEN  # 2000 + 3000 = the cap exactly
    assert (await budget.reserve("slack:T1:U1")).state is BudgetState.USER_SPENT
    async for key in redis.scan_iter(match=f"{keys.prefix}:tokens:*"):
        assert 0 < await redis.ttl(key) <= 2 * 24 * 3600  # nothing kept forever


async def test_a_reservation_is_settled_with_the_real_usage(redis, keys) -> None:
    budget = TokenBudget(redis, keys, daily_limit=0, user_daily_limit=1000, reserve=700)
    held = await budget.reserve("slack:T1:U1")
    assert (await budget.reserve("slack:T1:U1")).state is BudgetState.USER_SPENT  # 700 + 700 > 1000
    await budget.settle(held, 100)  # the answer cost less than its estimate: the rest is free again
    assert (await budget.reserve("slack:T1:U1")).state is BudgetState.OPEN  # 100 + 700 <= 1000


class BlockingResearcher(CountingResearcher):
    """Holds every answer until released, so two questions are in flight together."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def answer(self, request: object, progress: object) -> Outcome:
        self.calls += 1
        await self.release.wait()
        return Outcome()


async def _until_one_is_refused_or_both_reach_the_model(tasks: list[asyncio.Future], researcher: BlockingResearcher) -> None:
    """The researcher blocks until released, so a question that finishes first was refused; if both
    got past the budget check (the overshoot) both block in the researcher and calls reaches 2. The
    wait used to run its full 2 s whenever the budget held."""
    for _ in range(200):
        await asyncio.sleep(0.01)
        if researcher.calls == 2 or any(task.done() for task in tasks):
            return


async def test_two_concurrent_questions_cannot_overshoot_the_users_budget(redis, keys) -> None:
    """Each question is estimated at 60% of what is left: only one may run the model."""
    researcher = BlockingResearcher()
    budget = TokenBudget(redis, keys, daily_limit=1_000_000, user_daily_limit=10_000, reserve=6000)
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher, budget=budget)
    question = "vllm-ascend 0.9.1 on 910B fails with ACL error 507015 at startup"
    tasks = [asyncio.ensure_future(conversation.handle(ask(question, "alice", thread))) for thread in ("t1", "t2")]
    await _until_one_is_refused_or_both_reach_the_model(tasks, researcher)
    researcher.release.set()
    first, second = await asyncio.gather(*tasks)
    assert researcher.calls == 1
    assert sorted("MODEL ANSWER" in r.text for r in (first, second)) == [False, True]
    assert any("your share of today's research budget" in r.text for r in (first, second))


async def test_two_concurrent_questions_cannot_overshoot_the_shared_budget(redis, keys) -> None:
    researcher = BlockingResearcher()
    budget = TokenBudget(redis, keys, daily_limit=10_000, user_daily_limit=0, reserve=6000)
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher, budget=budget)
    question = "vllm-ascend 0.9.1 on 910B fails with ACL error 507015 at startup"
    tasks = [asyncio.ensure_future(conversation.handle(ask(question, sender, thread)))
             for sender, thread in (("alice", "t1"), ("bob", "t2"))]
    await _until_one_is_refused_or_both_reach_the_model(tasks, researcher)
    researcher.release.set()
    replies = await asyncio.gather(*tasks)
    assert researcher.calls == 1
    assert any("Today's research budget is used up" in r.text for r in replies)


async def test_a_user_over_their_share_gets_a_notice_and_offline_triage_others_get_the_model(redis, keys) -> None:
    researcher = CountingResearcher()  # each answer costs 600 tokens
    budget = TokenBudget(redis, keys, daily_limit=1_000_000, user_daily_limit=1000)
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher, budget=budget)
    question = "vllm-ascend 0.9.1 on 910B fails with ACL error 507015 at startup"

    first = await conversation.handle(ask(question, "alice", "t1"))
    second = await conversation.handle(ask(question, "alice", "t2"))  # 600 < 1000: still allowed
    assert "MODEL ANSWER" in first.text and "MODEL ANSWER" in second.text and researcher.calls == 2

    third = await conversation.handle(ask(question, "alice", "t3"))  # 1200 >= 1000
    assert third.kind is ReplyKind.ANSWER and researcher.calls == 2
    assert "MODEL ANSWER" not in third.text
    assert "your share of today's research budget" in third.text
    assert "507015" in third.text  # the offline diagnostic still answers

    zh = await conversation.handle(ask("vllm-ascend 在 910B 上启动报错 507015 怎么办？", "alice", "t4"))
    assert "你今天的研究额度已用完" in zh.text and researcher.calls == 2

    bob = await conversation.handle(ask(question, "bob", "t5"))
    assert "MODEL ANSWER" in bob.text and researcher.calls == 3
    # the same id in another organisation is another person
    other_org = await conversation.handle(ask(question, "alice", "t6", platform="wecom", workspace="corp2"))
    assert "MODEL ANSWER" in other_org.text and researcher.calls == 4


async def test_the_shared_budget_notice_still_wins(redis, keys) -> None:
    researcher = CountingResearcher()
    budget = TokenBudget(redis, keys, daily_limit=500, user_daily_limit=1000)
    conversation = Conversation(RedisSessionStore(redis, keys, 600), researcher=researcher, budget=budget)
    await conversation.handle(ask("vllm-ascend 507015 on 910B", "alice", "t1"))
    reply = await conversation.handle(ask("vllm-ascend 507015 on 910B", "bob", "t2"))
    assert "Today's research budget is used up" in reply.text and researcher.calls == 1
