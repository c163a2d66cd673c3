"""Write a file so readers see the old content or the new, never half of it (a crash or a concurrent
reader included): write beside it, then rename over it."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_json_atomically(path: Path, payload: Any, *, compact: bool = True) -> int:
    """`payload` as UTF-8 JSON at `path`; returns the bytes written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    separators = (",", ":") if compact else None
    body = json.dumps(payload, ensure_ascii=False, separators=separators).encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return len(body)
