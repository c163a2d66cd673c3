"""Settings that cannot be read (a value no field accepts, such as FEISHU_MODE=websocket): one line per
variable, the same for every command, instead of pydantic's traceback."""
from __future__ import annotations

import sys
from typing import TypeVar

from pydantic import ValidationError
from pydantic_settings import BaseSettings

SettingsT = TypeVar("SettingsT", bound=BaseSettings)


def error_lines(exc: ValidationError) -> list[str]:
    """'VARIABLE: what it takes', never the value given (it may be a secret)."""
    return [
        f"{'.'.join(str(part) for part in error['loc']).upper()}: {error['msg']}"
        for error in exc.errors(include_input=False, include_url=False)
    ]


def load_settings(model: type[SettingsT]) -> SettingsT | None:
    """The settings from the environment and .env, or None after printing why they cannot be read."""
    try:
        return model()
    except ValidationError as exc:
        for line in error_lines(exc):
            print(f"configuration error: {line}", file=sys.stderr, flush=True)
        return None
