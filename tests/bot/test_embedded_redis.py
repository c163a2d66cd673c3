"""Issue 16 item 5: the embedded redis-server that `serve` starts is private to the bot."""
from __future__ import annotations

import logging
import shutil
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.exceptions import AuthenticationError, ResponseError
from redis.retry import Retry

from bot.embedded_redis import EmbeddedRedis, find_redis_server, start_embedded_redis
from bot.settings import Settings


@pytest.fixture
def server(tmp_path: Path) -> Iterator[EmbeddedRedis]:
    started = start_embedded_redis(tmp_path / "redis", persist=False)
    try:
        yield started
    finally:
        started.stop()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _stranger(**connection: object) -> redis.Redis:
    """A client that takes the first answer: redis-py 8 retries a refused AUTH with backoff by
    default (~4 s before it gives up), and the refusal is what these tests look at."""
    return redis.Redis(retry=Retry(NoBackoff(), 0), **connection)  # type: ignore[arg-type]


def _refused_without_password(client: redis.Redis) -> bool:
    try:
        client.ping()
    except AuthenticationError:  # NOAUTH, WRONGPASS, or HELLO refused before AUTH
        return True
    except ResponseError as exc:
        return "NOAUTH" in str(exc) or "WRONGPASS" in str(exc)
    finally:
        client.close()
    return False


def test_it_listens_on_a_private_socket_only_and_refuses_clients_without_the_password(server: EmbeddedRedis) -> None:
    assert server.socket_path is not None and server.port is None
    assert _refused_without_password(_stranger(unix_socket_path=str(server.socket_path)))
    assert _refused_without_password(_stranger(unix_socket_path=str(server.socket_path), password="guess"))
    owner = redis.Redis.from_url(server.url)
    try:
        assert owner.ping()
        assert owner.config_get("port") == {"port": "0"}  # no TCP listener for another local user to reach
        assert owner.config_get("bind")["bind"].split() == ["127.0.0.1"]
    finally:
        owner.close()


def test_its_files_are_readable_by_the_owner_only(server: EmbeddedRedis) -> None:
    assert _mode(server.data_dir) == 0o700
    assert _mode(server.data_dir / "password") == 0o600
    assert _mode(server.data_dir / "redis.conf") == 0o600
    assert server.socket_path is not None and _mode(server.socket_path) == 0o700
    password = (server.data_dir / "password").read_text().strip()
    assert len(password) >= 32 and password == server.password


def test_the_password_is_never_on_the_command_line_and_survives_a_restart(tmp_path: Path) -> None:
    first = start_embedded_redis(tmp_path / "r", persist=False)
    try:
        cmdline = Path(f"/proc/{first.process.pid}/cmdline").read_bytes()
        assert first.password.encode() not in cmdline  # `ps` shows the command line to every user
    finally:
        first.stop()
    second = start_embedded_redis(tmp_path / "r", persist=False)
    try:
        assert second.url == first.url  # clients configured with the first URL still connect
        assert redis.Redis.from_url(second.url).ping()
    finally:
        second.stop()


def test_an_existing_world_readable_directory_is_tightened(tmp_path: Path) -> None:
    loose = tmp_path / "redis"
    loose.mkdir(mode=0o777)
    loose.chmod(0o777)
    (loose / "password").write_text("an-old-password-from-a-careless-copy-0123\n")
    (loose / "password").chmod(0o644)
    started = start_embedded_redis(loose, persist=False)
    try:
        assert _mode(loose) == 0o700 and _mode(loose / "password") == 0o600
    finally:
        started.stop()


def test_with_a_port_it_binds_loopback_and_still_requires_the_password(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = start_embedded_redis(tmp_path / "r", port, persist=False)
    try:
        assert started.socket_path is None
        assert _refused_without_password(_stranger(host="127.0.0.1", port=port))
        assert redis.Redis.from_url(started.url).ping()
    finally:
        started.stop()


def _real_redis_server() -> str:
    return shutil.which("redis-server") or find_redis_server().path


def test_a_redis_server_on_path_is_preferred_and_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    real = _real_redis_server()
    fake_bin, record = tmp_path / "bin", tmp_path / "called"
    fake_bin.mkdir()
    wrapper = fake_bin / "redis-server"
    wrapper.write_text(f'#!/bin/sh\necho "$@" >> "{record}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", str(fake_bin))
    caplog.set_level(logging.INFO, logger="bot.embedded_redis")
    started = start_embedded_redis(tmp_path / "r", persist=False)
    try:
        assert redis.Redis.from_url(started.url).ping()
    finally:
        started.stop()
    assert record.read_text().strip() == str(tmp_path / "r" / "redis.conf")  # our wrapper ran, with the config
    assert not started.binary.bundled and started.binary.path == str(wrapper)
    assert any(str(wrapper) in r.getMessage() for r in caplog.records)
    assert not any(r.levelno >= logging.WARNING for r in caplog.records)


def test_the_bundled_build_is_used_only_without_one_on_path_and_warned_about(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    caplog.set_level(logging.INFO, logger="bot.embedded_redis")
    started = start_embedded_redis(tmp_path / "r", persist=False)
    try:
        assert started.binary.bundled
        assert _refused_without_password(_stranger(unix_socket_path=str(started.socket_path)))
    finally:
        started.stop()
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "bundled" in warnings[0].getMessage()


def test_serve_says_which_server_and_where_but_never_prints_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.server import _with_redis  # noqa: PLC0415
    from bot.shared_redis import release  # noqa: PLC0415

    settings = Settings(_env_file=None, redis_url=None, data_dir=tmp_path / "data", anthropic_api_key=None)  # type: ignore[call-arg]
    updated, shared = _with_redis(settings)
    assert shared is not None and shared.started is not None
    try:
        out = capsys.readouterr().out
        assert shared.started.password not in out and shared.started.password not in repr(shared.where)
        assert "embedded redis-server" in out and shared.started.binary.path in out and "password in" in out
        assert updated.redis_url == shared.url
        assert redis.Redis.from_url(updated.redis_url).ping()
    finally:
        release(shared)
