"""Running git as a subprocess, safely: no prompts, no pager, killed on timeout or cancel."""
from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

# Refs and paths come from the model: allow ordinary names only, never an option (leading '-').
_SAFE_REF_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-+")


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0


class GitError(Exception):
    pass


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "TMPDIR", "SYSTEMROOT")}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", LC_ALL="C", GIT_CONFIG_NOSYSTEM="1", GIT_ASKPASS="")
    return env


async def run_git(args: list[str], cwd: Path | None = None, timeout: float = 30.0) -> GitResult:
    """Run `git <args>`; raises GitError on timeout. Never goes through a shell."""
    proc = await asyncio.create_subprocess_exec(
        "git",
        *args,
        cwd=str(cwd) if cwd else None,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=_env(),
    )
    try:
        stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except asyncio.TimeoutError as exc:
        raise GitError(f"git {args[0]} timed out after {timeout:.0f} s") from exc
    finally:
        if proc.returncode is None:  # timed out or cancelled: do not leave git running
            proc.kill()
            await proc.wait()
    return GitResult(proc.returncode or 0, stdout, stderr)


def is_safe_ref(ref: str) -> bool:
    return 0 < len(ref) <= 200 and not ref.startswith("-") and ".." not in ref and set(ref) <= _SAFE_REF_CHARS


def is_safe_path(path: str) -> bool:
    parts = path.split("/")
    return (
        0 < len(path) <= 500
        and not path.startswith(("/", "-"))
        and "\x00" not in path
        and all(p not in ("", ".", "..") for p in parts)
    )
