"""One embedded Redis per DATA_DIR (issue 25 item 4): a second bot process uses the server the first
started there instead of starting its own on the same socket, and the last one to leave stops it."""
from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest
import redis

from bot.embedded_redis import EmbeddedRedisError, answers, configured_address, start_embedded_redis
from bot.shared_redis import SharedRedis, acquire, release


def _client(shared: SharedRedis) -> redis.Redis:
    return redis.Redis.from_url(shared.url)


def test_a_second_process_uses_the_server_the_first_started(tmp_path: Path) -> None:
    first = acquire(tmp_path / "r", persist=False)
    second = acquire(tmp_path / "r", persist=False)
    try:
        assert first.started is not None and second.started is None
        assert second.url == first.url and second.where == first.where
        _client(first).set("job", "queued by web")
        assert _client(second).get("job") == b"queued by web"  # one server: what one enqueues the other reads
    finally:
        release(second)
        release(first)


def test_the_first_leaving_keeps_it_for_the_second_and_the_last_stops_it(tmp_path: Path) -> None:
    first = acquire(tmp_path / "r", persist=False)
    second = acquire(tmp_path / "r", persist=False)
    assert first.started is not None
    address = configured_address(tmp_path / "r")
    assert address is not None

    said = release(first)
    assert "left running" in said and "1 other bot process" in said
    assert first.started.process.poll() is None and _client(second).ping()

    assert "stopped" in release(second)
    assert not answers(*address)
    assert first.started.process.wait(timeout=10) is not None  # exits (soon after "stopped"), whoever asked it to


def test_ctrl_c_to_the_starting_process_group_does_not_reach_the_server(tmp_path: Path) -> None:
    shared = acquire(tmp_path / "r", persist=False)
    try:
        assert shared.started is not None
        # a terminal's Ctrl-C goes to the foreground process group: the server is not in it
        assert os.getpgid(shared.started.process.pid) != os.getpgid(0)
    finally:
        release(shared)


def test_a_server_that_died_leaves_no_trap_the_next_start_replaces_it(tmp_path: Path) -> None:
    first = acquire(tmp_path / "r", persist=False)
    assert first.started is not None
    first.started.process.send_signal(signal.SIGKILL)  # its socket file stays behind
    first.started.process.wait()
    again = acquire(tmp_path / "r", persist=False)
    try:
        assert again.started is not None and _client(again).ping()
    finally:
        release(again)
    assert "stopped" in release(first)  # leaving a server that is gone is not an error


def test_two_processes_starting_at_once_start_one_server(tmp_path: Path) -> None:
    results: list[SharedRedis] = []
    threads = [threading.Thread(target=lambda: results.append(acquire(tmp_path / "r", persist=False))) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert len(results) == 3 and sum(r.started is not None for r in results) == 1
        assert len({r.url for r in results}) == 1
    finally:
        for shared in results:
            release(shared)


def test_a_server_refusing_the_password_is_refused_with_one_line_naming_redis_url(tmp_path: Path) -> None:
    shared = acquire(tmp_path / "r", persist=False)
    original = (tmp_path / "r" / "password").read_text()
    try:
        (tmp_path / "r" / "password").write_text("not-the-servers-password\n")
        with pytest.raises(EmbeddedRedisError) as refused:
            acquire(tmp_path / "r", persist=False)
        message = str(refused.value)
        assert "REDIS_URL" in message and "\n" not in message and "not-the-servers-password" not in message
    finally:
        (tmp_path / "r" / "password").write_text(original)
        release(shared)


def test_a_second_server_is_never_started_on_a_socket_that_answers(tmp_path: Path) -> None:
    first = start_embedded_redis(tmp_path / "r", persist=False)
    try:
        with pytest.raises(EmbeddedRedisError, match="already answers"):
            start_embedded_redis(tmp_path / "r", persist=False)
        assert redis.Redis.from_url(first.url).ping()
    finally:
        first.stop()
