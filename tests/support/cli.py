"""`python -m bot ARGS` run in the test's own process, with what a subprocess would get.

A fresh interpreter costs 2-10 s on the two-core CI machine before the command does anything
(the anthropic/openai/mcp SDK imports and jieba's dictionary), so tests whose point is the
command's output, exit code and files call `bot.cli.main` here instead: the same argv, the
environment given and nothing else (os.environ is replaced, not extended), stdin from the bytes
given on a real file descriptor, stdout and stderr on real files (so `fileno()` and `isatty()`
behave as on a pipe), the cwd given (the repository root by default), and an exception that escapes `main` reported
as the interpreter would: a traceback on stderr and exit status 1.

Tests about the process boundary itself (signals, the `python -m bot` entry point, two processes
sharing one Redis) still spawn a process.
"""
from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import os
import subprocess
import sys
import tempfile
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
# os.environ, the cwd, sys.std* and the root logger are process-wide: one command at a time.
_LOCK = threading.Lock()


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """Put back the root and named loggers' levels, handlers and propagation after the block.

    `configure_logging` (which `main` runs) points the root logger at the command's stderr; left
    in place, later log lines would go to a closed file."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    named = {name: (lg.level, lg.handlers[:], lg.propagate)
             for name, lg in logging.Logger.manager.loggerDict.items() if isinstance(lg, logging.Logger)}
    try:
        yield
    finally:
        root.handlers[:], root.level = handlers, level
        for name, lg in list(logging.Logger.manager.loggerDict.items()):
            if isinstance(lg, logging.Logger) and name in named:
                lg.level, lg.handlers[:], lg.propagate = named[name]
            elif isinstance(lg, logging.Logger):
                lg.setLevel(logging.NOTSET)
        logging.Logger.manager._clear_cache()  # type: ignore[attr-defined]


@contextlib.contextmanager
def _fresh_process_memory() -> Iterator[None]:
    """What a new process starts without and takes with it: the features each model endpoint refused
    (keyed by URL; a later fake server on a reused port must not inherit them). The other
    process-wide caches are keyed by clone path and commit, which differ per test."""
    from core.research import compat  # noqa: PLC0415

    compat.forget_all()
    try:
        yield
    finally:
        compat.forget_all()


def _exit_status(stop: SystemExit, err: io.TextIOBase) -> int:
    """What the interpreter makes of `raise SystemExit(code)` (bot/__main__.py)."""
    if stop.code is None:
        return 0
    if isinstance(stop.code, int):
        return stop.code
    print(stop.code, file=err)
    return 1


def run_bot_here(args: Sequence[str], env: Mapping[str, str], stdin: bytes | None = None,
                 cwd: Path = ROOT) -> subprocess.CompletedProcess[bytes]:
    """`python -m bot *args` with exactly `env` in `cwd` (where `.env` is looked for); returns what
    `subprocess.run(..., capture_output=True)` would."""
    from bot.cli import main  # noqa: PLC0415 - imported by the first test that runs a command

    with contextlib.ExitStack() as stack:
        stack.enter_context(_LOCK)
        files = [stack.enter_context(tempfile.TemporaryFile()) for _ in range(3)]
        files[0].write(stdin or b"")
        files[0].seek(0)
        std_in, std_out, std_err = (io.TextIOWrapper(f, encoding="utf-8", write_through=True) for f in files)
        stack.enter_context(mock.patch.dict(os.environ, dict(env), clear=True))
        stack.enter_context(mock.patch.multiple(sys, stdin=std_in, stdout=std_out, stderr=std_err))
        stack.enter_context(contextlib.chdir(cwd))
        stack.enter_context(logging_restored())
        stack.enter_context(_fresh_process_memory())
        try:
            code = main(list(args))
        except SystemExit as stop:
            code = _exit_status(stop, std_err)
        except Exception:  # noqa: BLE001 - an uncaught error is a traceback and status 1, as in a process
            traceback.print_exc(file=std_err)
            code = 1
        std_out.flush()
        std_err.flush()
        captured = []
        for f in files[1:]:
            f.seek(0)
            captured.append(f.read())
        out, err = captured
    return subprocess.CompletedProcess(["python", "-m", "bot", *args], code, out, err)


async def run_bot_here_async(args: Sequence[str], env: Mapping[str, str], stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    """The same from a coroutine: the command runs its own event loop (asyncio.run) on a worker thread,
    while the test's loop keeps serving the fake APIs it talks to."""
    return await asyncio.to_thread(run_bot_here, args, env, stdin)
