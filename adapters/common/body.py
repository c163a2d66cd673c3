"""Reading a webhook body with a size cap, before anything parses it.

`Request.body()` reads whatever the client sends; a declared Content-Length over the cap is
refused without reading, and a chunked body stops being read once it passes the cap.
"""
from __future__ import annotations

from starlette.requests import Request


class BodyTooLarge(Exception):
    pass


async def read_capped_body(request: Request, limit: int) -> bytes:
    """The body, or BodyTooLarge once it is (or says it will be) over `limit` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
    return b"".join(chunks)
