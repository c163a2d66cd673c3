"""The research cache: the same tool call with the same arguments within a TTL is not paid twice.

Redis is an optimisation here: when it fails, tools run uncached and the
answer still arrives.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import RedisError

from core.keys import Keys
from core.research.tools.base import ToolOutput

log = logging.getLogger(__name__)


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


class ToolCache:
    def __init__(self, redis: Redis | None, keys: Keys) -> None:
        self._redis = redis
        self._keys = keys

    async def get(self, tool: str, arguments: Mapping[str, Any]) -> ToolOutput | None:
        if self._redis is None:
            return None
        try:
            raw = await self._redis.get(self._keys.tool_cache(tool, canonical_arguments(arguments)))
            return ToolOutput.from_json(raw) if raw else None
        except (RedisError, OSError, ValueError, KeyError) as exc:
            log.warning("research cache read failed for %s: %s", tool, type(exc).__name__)
            return None

    async def put(self, tool: str, arguments: Mapping[str, Any], output: ToolOutput, ttl: int) -> None:
        if self._redis is None or ttl <= 0 or output.is_error or not output.cacheable:
            return
        try:
            await self._redis.set(self._keys.tool_cache(tool, canonical_arguments(arguments)), output.to_json(), ex=ttl)
        except (RedisError, OSError) as exc:
            log.warning("research cache write failed for %s: %s", tool, type(exc).__name__)
