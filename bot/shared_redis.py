"""One embedded Redis per DATA_DIR, shared by every bot process started on it without REDIS_URL.

`serve` alone, or `web` and `worker` started apart: the first process starts redis-server on DATA_DIR's
private socket (bot.embedded_redis); a later one finds it answering there, authenticates with the
password kept beside it, and uses it. Two servers on one socket would split the job stream between
them: questions accepted by one process and never read by the other, with no error anywhere.

Each process holds one named connection (its presence) while it runs. The last process to leave shuts
the server down, whoever started it, so stopping the process that started it never takes Redis from
under the others. Deciding (find or start, count and stop) happens under a lock file in the same
directory, so two processes starting or stopping at once cannot both start a server or both leave one
running.
"""
from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import redis

from bot.embedded_redis import (
    PASSWORD_FILE,
    EmbeddedRedis,
    EmbeddedRedisError,
    answers,
    configured_address,
    describe_server,
    private_dir,
    server_url,
    start_embedded_redis,
)

log = logging.getLogger(__name__)

PRESENCE_NAME = "ascend-copilot-process"  # CLIENT SETNAME of each process's presence connection
LOCK_FILE = "shared.lock"


@dataclass
class SharedRedis:
    url: str  # holds the password: hand it to clients, never print or log it
    where: str  # describe_server(): for humans, no secret
    data_dir: Path
    presence: redis.Redis  # this process's named connection, held until release()
    started: EmbeddedRedis | None  # the server this process started; None: it found one running


@contextmanager
def _locked(data_dir: Path) -> Iterator[None]:
    fd = os.open(data_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _presence(url: str) -> redis.Redis:
    client = redis.Redis.from_url(url, client_name=PRESENCE_NAME, single_connection_client=True, socket_connect_timeout=2)
    client.ping()  # connects (and names the connection) now
    return client


def _attach(data_dir: Path) -> SharedRedis | None:
    """The server already answering on data_dir's address, or None when none does. Raises
    EmbeddedRedisError when one answers but this directory's password does not open it."""
    address = configured_address(data_dir)
    if address is None or not answers(*address):
        return None
    where = describe_server(data_dir, *address)
    try:
        password = (data_dir / PASSWORD_FILE).read_text().strip()
    except OSError:
        password = ""
    url = server_url(password, *address)
    try:
        presence = _presence(url)
    except redis.RedisError as exc:
        raise EmbeddedRedisError(
            f"a redis-server already answers on {where} but refuses that password ({type(exc).__name__}): "
            "stop it, or set REDIS_URL to the Redis every bot process should share"
        ) from None
    return SharedRedis(url, where, data_dir, presence, started=None)


def acquire(data_dir: Path, *, persist: bool = True) -> SharedRedis:
    """The embedded Redis of `data_dir`: the one already running there, else a new one; this process
    counts as one of its users until release()."""
    data_dir = private_dir(data_dir)
    with _locked(data_dir):
        attached = _attach(data_dir)
        if attached is not None:
            return attached
        server = start_embedded_redis(data_dir, persist=persist)
        return SharedRedis(server.url, server.describe(), data_dir, _presence(server.url), started=server)


def _other_processes(shared: SharedRedis) -> int:
    mine = shared.presence.client_id()
    return sum(1 for c in shared.presence.client_list() if c.get("name") == PRESENCE_NAME and int(c["id"]) != mine)


def release(shared: SharedRedis) -> str:
    """Leave the shared Redis: stop it when no other bot process uses it, else leave it to them.
    Returns what happened, for the process's last log line."""
    with _locked(shared.data_dir):
        try:
            others = _other_processes(shared)
        except redis.RedisError:
            others = 0  # it is gone already (stopped by hand, or crashed): nothing to leave running
        if others:
            shared.presence.close()
            return f"embedded redis-server left running on {shared.where}: {others} other bot process(es) use it"
        try:
            shared.presence.shutdown()  # saves first when persistence is on
        except redis.RedisError:
            pass  # already stopped
        finally:
            shared.presence.close()
        _wait_until_stopped(shared)
        return f"embedded redis-server on {shared.where} stopped (no other bot process uses it)"


def _wait_until_stopped(shared: SharedRedis) -> None:
    """Hold the lock until the socket is free, so a process starting now starts a new server instead
    of finding this one on its way out."""
    if shared.started is not None:
        try:
            shared.started.process.wait(timeout=10)  # reaps the process this one started
        except subprocess.TimeoutExpired:
            shared.started.stop()
        return
    address = configured_address(shared.data_dir)
    deadline = time.monotonic() + 10
    while address is not None and answers(*address) and time.monotonic() < deadline:
        time.sleep(0.05)
