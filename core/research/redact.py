"""Keeping secrets and mass mentions out of everything the model sees or the user reads."""
from __future__ import annotations

import re
from collections.abc import Iterable

from pydantic import SecretStr

# Well-known token shapes, so a token pasted into an issue body does not travel on either.
_TOKEN_SHAPES = re.compile(
    r"sk-ant-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|xox[abprs]-[A-Za-z0-9-]{10,}"
)
_MASS_MENTIONS = re.compile(r"<!(channel|here|everyone)(\|[^>]*)?>|@(channel|here|everyone|all)\b|@所有人", re.IGNORECASE)

REDACTED = "[redacted]"


class Redactor:
    """Replaces configured secret values (and common token shapes) with a marker."""

    def __init__(self, secrets: Iterable[str]) -> None:
        # Short values would redact ordinary words; real keys are long.
        self._secrets = sorted({s for s in secrets if len(s) >= 8}, key=len, reverse=True)

    @classmethod
    def from_settings(cls, settings: object) -> "Redactor":
        values = []
        for name in type(settings).model_fields:  # type: ignore[attr-defined]
            value = getattr(settings, name, None)
            if isinstance(value, SecretStr):
                values.append(value.get_secret_value())
        return cls(values)

    def __call__(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _TOKEN_SHAPES.sub(REDACTED, text)


def defang_mentions(text: str) -> str:
    """@channel, @here, <!everyone>, @所有人 from model output must not notify a whole channel."""

    def defang(match: re.Match[str]) -> str:
        word = match.group(1) or match.group(3)
        return "@\u200b" + (word if word else "所有人")

    return _MASS_MENTIONS.sub(defang, text)
