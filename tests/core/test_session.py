import asyncio
from dataclasses import replace

from core.messages import Option
from core.session import MemorySessionStore, PendingClarification, RedisSessionStore, Session, session_from_json, session_to_json


async def test_round_trip_keeps_every_field(redis, keys):
    store = RedisSessionStore(redis, keys, ttl_seconds=60)
    pending = PendingClarification("q?", (Option("vllm", "vLLM", "vllm-project/vllm"),), "zh", 123.0)

    def fill(s: Session) -> Session:
        s = s.with_turn("user", "hello", max_turns=10, max_bytes=10_000)
        return replace(s, repos=("vllm-project/vllm",), env={"chip": "910B"}, pending=pending, last_trace=({"tool": "x"},))

    await store.update("k", fill)
    loaded = await store.load("k")
    assert loaded.version == 1
    assert loaded.turns[0].text == "hello"
    assert loaded.repos == ("vllm-project/vllm",)
    assert loaded.env == {"chip": "910B"}
    assert loaded.pending == pending
    assert loaded.last_trace == ({"tool": "x"},)
    assert 0 < await redis.ttl(keys.session("k")) <= 60


async def test_concurrent_updates_do_not_overwrite_each_other(redis, keys):
    store = RedisSessionStore(redis, keys, ttl_seconds=60)

    async def add(i: int) -> None:
        await store.update("k", lambda s: s.with_turn("user", f"m{i}", max_turns=100, max_bytes=100_000))

    await asyncio.gather(*(add(i) for i in range(20)))
    loaded = await store.load("k")
    assert sorted(t.text for t in loaded.turns) == sorted(f"m{i}" for i in range(20))
    assert loaded.version == 20


async def test_history_is_bounded_by_turns_and_bytes():
    s = Session()
    for i in range(30):
        s = s.with_turn("user", f"turn {i}", max_turns=5, max_bytes=100_000)
    assert [t.text for t in s.turns] == [f"turn {i}" for i in range(25, 30)]
    big = Session()
    for i in range(10):
        big = big.with_turn("user", "x" * 1000, max_turns=100, max_bytes=3_500)
    assert len(big.turns) == 3


async def test_delete_forgets_the_thread(redis, keys):
    store = RedisSessionStore(redis, keys, ttl_seconds=60)
    await store.update("k", lambda s: replace(s, repos=("a/b",)))
    await store.delete("k")
    assert (await store.load("k")).repos == ()


async def test_memory_store_matches_redis_store_semantics():
    store = MemorySessionStore()
    await store.update("k", lambda s: replace(s, repos=("a/b",)))
    await store.update("k", lambda s: replace(s, env={"cann": "8.3.RC2"}))
    loaded = await store.load("k")
    assert loaded.repos == ("a/b",) and loaded.env == {"cann": "8.3.RC2"} and loaded.version == 2


def test_json_of_empty_session_round_trips():
    assert session_from_json(session_to_json(Session())) == Session()
    assert session_from_json(None) == Session()
