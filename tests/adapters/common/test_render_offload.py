"""adapters.common.offload: large renders leave the event loop free, small ones stay inline."""
from __future__ import annotations

import asyncio
import threading
import time

from adapters.common.offload import render_off_loop, text_size
from adapters.telegram.render import render_blocks, reply_markdown
from adapters.telegram.split import split_html
from core.messages import Reply, ReplyKind


async def test_a_large_render_lets_the_loop_run_meanwhile() -> None:
    loop_ran = threading.Event()

    def render_until_the_loop_runs(text: str) -> str:
        # Busy Python work that only finishes once the loop has run a coroutine in the meantime.
        # On the loop itself it never could: after the safety deadline it reports starvation.
        deadline = time.monotonic() + 5
        while not loop_ran.is_set():
            if time.monotonic() > deadline:
                return "loop starved"
        return "rendered"

    async def ticker() -> None:
        for _ in range(3):
            await asyncio.sleep(0)
        loop_ran.set()

    task = asyncio.create_task(ticker())
    assert await render_off_loop(render_until_the_loop_runs, "x" * 50_000) == "rendered"
    await task


async def test_small_inputs_render_inline_and_large_ones_in_a_thread() -> None:
    here = threading.get_ident()
    small = await render_off_loop(lambda text: threading.get_ident(), "short answer")
    large = await render_off_loop(lambda reply: threading.get_ident(), Reply(ReplyKind.ANSWER, "x" * 50_000, "en"))
    by_keyword = await render_off_loop(lambda *, text: threading.get_ident(), text="y" * 50_000)
    assert small == here
    assert large != here and by_keyword != here


async def test_a_hostile_telegram_render_runs_while_the_loop_keeps_ticking() -> None:
    reply = Reply(ReplyKind.ANSWER, "[\n" * 100_000, "en")  # 200 KB, 100,000 lines
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            await asyncio.sleep(0.001)
            ticks += 1

    task = asyncio.create_task(ticker())
    chunks = await render_off_loop(lambda r: split_html(render_blocks(reply_markdown(r))), reply)
    stop.set()
    await task
    assert chunks and all(c.count("[") for c in chunks)
    assert ticks > 0  # inline, the loop could not have run the ticker once before the render ended


def test_text_size_counts_strings_replies_and_lists() -> None:
    assert text_size("abc") == 3
    assert text_size(Reply(ReplyKind.ANSWER, "abcd", "en")) == 4
    assert text_size(["ab", ("c", "de")]) == 5
    assert text_size(42) == 0
