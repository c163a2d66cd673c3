"""The AI bot's long connection (WECOM_MODE=ws): subscribe, heartbeat, reconnect, send.

- One active connection per bot: WeCom replaces an older connection when a new
  one subscribes, so replicas elect one owner through a Redis lock.
- Heartbeat: an app-level `ping` every WECOM_WS_HEARTBEAT_SECONDS; two unanswered
  pings mean the socket is dead.
- Reconnect with exponential back-off (base doubling up to a cap), reset after a
  successful subscription.
- Outbound frames come from the Redis outbox and are acknowledged there only
  after WeCom acknowledged them, so a drop mid-answer loses nothing.

Every loop stops on an event as well as on cancellation: on Python 3.11 redis-py's
`asyncio.wait_for` around socket writes can swallow a task's cancel, so a loop that
only relied on `cancel()` could keep running (and keep renewing the leader lock).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from typing import Any, Awaitable, Callable

import websockets
from redis.asyncio import Redis
from websockets.exceptions import ConnectionClosed, WebSocketException

from .frames import EVENT_CALLBACK, MSG_CALLBACK, PING, SUBSCRIBE, req_id, ws_frame
from .outbox import Outbox, OutboxEntry, coalesce

log = logging.getLogger(__name__)
# websockets logs frame contents at DEBUG: the subscribe frame carries the bot secret and
# callbacks carry user text, so its logger for this connection never goes below INFO.
_wire_log = logging.getLogger(__name__ + ".wire")
_wire_log.setLevel(logging.INFO)

_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class ConnectionLost(Exception):
    pass


async def _pause(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep unless `stop` is set first; True when it was."""
    try:
        async with asyncio.timeout(seconds):
            await stop.wait()
    except TimeoutError:
        return False
    return True


class AuthError(Exception):
    pass


class LeaderLock:
    """Held by the one process allowed to connect for a bot; renewed while connected."""

    def __init__(self, redis: Redis, key: str, ttl_ms: int = 15_000) -> None:
        self._key = key
        self._owner = secrets.token_hex(8)
        self._ttl_ms = ttl_ms
        self._acquire = redis.register_script(_RENEW)
        self._release = redis.register_script(_RELEASE)

    @property
    def ttl_seconds(self) -> float:
        return self._ttl_ms / 1000

    async def hold(self) -> bool:
        """Take the lock or extend it; False when another process holds it."""
        return bool(await self._acquire(keys=[self._key], args=[self._owner, self._ttl_ms]))

    async def release(self) -> None:
        await self._release(keys=[self._key], args=[self._owner])


Callback = Callable[[dict[str, Any]], Awaitable[None]]
Tick = Callable[[], Awaitable[None]]


class WsClient:
    def __init__(
        self,
        *,
        url: str,
        bot_id: str,
        secret: str,
        lock: LeaderLock,
        outbox: Outbox,
        on_callback: Callback,
        on_tick: Tick,
        heartbeat_seconds: float = 30.0,
        reconnect_base_seconds: float = 1.0,
        reconnect_max_seconds: float = 30.0,
        ack_timeout_seconds: float = 5.0,
        tick_seconds: float = 1.0,
        lock_poll_seconds: float = 2.0,
    ) -> None:
        self._url = url
        self._bot_id = bot_id
        self._secret = secret
        self._lock = lock
        self._outbox = outbox
        self._on_callback = on_callback
        self._on_tick = on_tick
        self._heartbeat = heartbeat_seconds
        self._base = reconnect_base_seconds
        self._max = reconnect_max_seconds
        self._ack_timeout = ack_timeout_seconds
        self._tick = tick_seconds
        self._lock_poll = lock_poll_seconds
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._stop = asyncio.Event()  # set by stop(): every loop of every session ends on it
        self._acks: dict[str, asyncio.Future[dict[str, Any]]] = {}
        self._missed_pongs = 0
        self._handlers: set[asyncio.Task[None]] = set()
        self.sessions = 0  # successful subscriptions, for tests and metrics
        self.connected = asyncio.Event()

    def __repr__(self) -> str:
        return f"WsClient(url={self._url!r}, bot_id={self._bot_id!r})"  # never the secret

    async def start(self) -> None:
        if self._task is None:
            self._stopping = False
            self._stop = asyncio.Event()
            self._task = asyncio.create_task(self._run(), name="wecom-ws")

    async def stop(self) -> None:
        self._stopping = True
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait([self._task], timeout=15)  # bounded; the loops also end on the event
            if self._task.done() and not self._task.cancelled():
                with contextlib.suppress(Exception):
                    self._task.exception()
            self._task = None
        for task in list(self._handlers):
            task.cancel()
        with contextlib.suppress(Exception):
            await self._lock.release()

    def backoff(self, attempt: int) -> float:
        return min(self._base * (2 ** max(attempt - 1, 0)), self._max)

    async def _run(self) -> None:
        attempt = 0
        while not self._stopping:
            try:
                held = await self._lock.hold()
            except Exception:
                log.warning("wecom ws: leader lock unavailable", exc_info=True)
                held = False
            if not held:
                await _pause(self._stop, self._lock_poll)
                continue
            try:
                if await self._session():
                    attempt = 0
            except AuthError as exc:
                log.error("wecom ws: %s", exc)
            except (OSError, WebSocketException, ConnectionLost, asyncio.TimeoutError, ValueError) as exc:
                log.warning("wecom ws: connection ended: %s", type(exc).__name__)
            finally:
                self.connected.clear()
            if self._stopping:
                break
            attempt += 1
            await _pause(self._stop, self.backoff(attempt))

    async def _session(self) -> bool:
        """One connection's life. Returns True when it had subscribed (resets the back-off)."""
        async with websockets.connect(
            self._url, open_timeout=10, ping_interval=None, max_size=4 * 2**20, logger=_wire_log
        ) as ws:
            await self._subscribe(ws)
            self.sessions += 1
            self._missed_pongs = 0
            self.connected.set()
            log.info("wecom ws: subscribed")
            over = asyncio.Event()
            tasks = [
                asyncio.create_task(self._receive(ws), name="wecom-ws-recv"),
                asyncio.create_task(self._heartbeat_loop(ws, over), name="wecom-ws-heartbeat"),
                asyncio.create_task(self._send_loop(ws, over), name="wecom-ws-send"),
                asyncio.create_task(self._tick_loop(over), name="wecom-ws-tick"),
                asyncio.create_task(self._renew_loop(over), name="wecom-ws-lock"),
                asyncio.create_task(self._stop.wait(), name="wecom-ws-stop"),
            ]
            try:
                done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                over.set()
                for task in tasks:
                    task.cancel()
                await asyncio.wait(tasks, timeout=5)  # bounded: stopping must never hang on one task
                self._fail_acks()
            for task in done:
                if not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            return True

    async def _subscribe(self, ws: Any) -> None:
        rid = req_id(SUBSCRIBE)
        await ws.send(json.dumps(ws_frame(SUBSCRIBE, rid, {"bot_id": self._bot_id, "secret": self._secret})))
        async with asyncio.timeout(self._ack_timeout * 2):
            while True:
                frame = json.loads(await ws.recv())
                if isinstance(frame, dict) and (frame.get("headers") or {}).get("req_id") == rid:
                    break
        if frame.get("errcode", 0) != 0:
            raise AuthError(f"subscribe rejected: errcode {frame.get('errcode')}")

    async def _receive(self, ws: Any) -> None:
        try:
            async for raw in ws:
                try:
                    frame = json.loads(raw)
                except ValueError:
                    log.warning("wecom ws: non-JSON frame dropped")
                    continue
                if not isinstance(frame, dict):
                    continue
                cmd = frame.get("cmd")
                if cmd in (MSG_CALLBACK, EVENT_CALLBACK):
                    event = ((frame.get("body") or {}).get("event") or {}).get("eventtype")
                    if event == "disconnected_event":
                        raise ConnectionLost("replaced by a newer connection for this bot")
                    self._spawn(frame)
                    continue
                rid = str((frame.get("headers") or {}).get("req_id", ""))
                if rid.startswith(PING):
                    self._missed_pongs = 0
                future = self._acks.pop(rid, None)
                if future is not None and not future.done():
                    future.set_result(frame)
        except ConnectionClosed as exc:
            raise ConnectionLost("socket closed") from exc
        raise ConnectionLost("socket closed")

    def _spawn(self, frame: dict[str, Any]) -> None:
        task = asyncio.create_task(self._handle(frame))
        self._handlers.add(task)
        task.add_done_callback(self._handlers.discard)

    async def _handle(self, frame: dict[str, Any]) -> None:
        try:
            await self._on_callback(frame)
        except Exception:
            log.exception("wecom ws: callback handling failed")

    async def _heartbeat_loop(self, ws: Any, over: asyncio.Event) -> None:
        while not await _pause(over, self._heartbeat):
            if self._missed_pongs >= 2:
                raise ConnectionLost("heartbeat not answered")
            self._missed_pongs += 1
            await ws.send(json.dumps(ws_frame(PING, req_id(PING))))

    async def _tick_loop(self, over: asyncio.Event) -> None:
        while not await _pause(over, self._tick):
            try:
                await self._on_tick()
            except Exception:
                log.warning("wecom ws: periodic task failed", exc_info=True)

    async def _renew_loop(self, over: asyncio.Event) -> None:
        while not await _pause(over, self._lock.ttl_seconds / 3):
            if not await self._lock.hold():
                raise ConnectionLost("lost the leader lock")

    # --- sending -------------------------------------------------------------------------------
    async def _send_loop(self, ws: Any, over: asyncio.Event) -> None:
        await self._outbox.ensure_group()
        pending = True  # first resend what an earlier connection sent but never saw acknowledged
        while not over.is_set():
            entries = await self._outbox.read(pending=pending, block_ms=250)
            if over.is_set():
                return  # what was just read stays pending for the next connection
            if pending and not entries:
                pending = False
                continue
            send, skip = coalesce(entries)
            for entry in skip:
                await self._outbox.ack(entry.entry_id)
            for entry in send:
                if over.is_set():
                    return
                await self._deliver(ws, entry)

    async def _deliver(self, ws: Any, entry: OutboxEntry) -> None:
        ack = await self._request(ws, entry.frame)
        if ack is not None and ack.get("errcode", 0) != 0:
            log.warning("wecom ws: %s rejected, errcode %s", entry.frame.get("cmd"), ack.get("errcode"))
            if entry.fallback is not None:  # e.g. the stream's req_id died with an older connection
                fallback = dict(entry.fallback)
                fallback["headers"] = {"req_id": req_id(str(fallback.get("cmd", "send")))}
                await self._request(ws, fallback)
        await self._outbox.ack(entry.entry_id)

    async def _request(self, ws: Any, frame: dict[str, Any]) -> dict[str, Any] | None:
        """Send and wait for WeCom's ack; None when none came in time (the frame is given up)."""
        rid = str(frame["headers"]["req_id"])
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._acks[rid] = future
        try:
            await ws.send(json.dumps(frame, ensure_ascii=False))
        except ConnectionClosed as exc:
            self._acks.pop(rid, None)
            raise ConnectionLost("socket closed while sending") from exc
        try:
            # asyncio.timeout, not wait_for: on 3.11 wait_for swallows a cancel that races the ack.
            async with asyncio.timeout(self._ack_timeout):
                return await future
        except TimeoutError:
            self._acks.pop(rid, None)
            log.warning("wecom ws: no ack for %s", frame.get("cmd"))
            return None

    def _fail_acks(self) -> None:
        for future in self._acks.values():
            if not future.done():
                future.set_exception(ConnectionLost("socket closed"))
        self._acks.clear()
