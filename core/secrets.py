"""Reading optional secrets: the one place a `SecretStr` becomes plain text."""
from __future__ import annotations

from pydantic import SecretStr


def secret(value: SecretStr | None) -> str:
    """The plain value of an optional secret ('' when unset)."""
    return value.get_secret_value() if value is not None else ""
