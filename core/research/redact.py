"""Keeping secrets and mass mentions out of everything the model sees or the user reads.

Three nets, each linear in the text (literal alternations and bounded quantifiers only):
- configured secrets (every `SecretStr` setting, and passwords inside URL settings such as
  REDIS_URL and REPO_URLS), also URL-encoded and in any letter case;
- credentials written into any URL (`scheme://user:password@host`);
- well-known token shapes, so a token pasted into an issue body does not travel on either.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import quote, quote_plus, unquote, urlsplit

from pydantic import SecretStr

# One alternation, each branch bounded (no `+`/`*`), so a hostile 200 KB line costs a few ms.
_TOKEN_SHAPES = re.compile(
    "|".join(
        (
            r"sk-ant-[A-Za-z0-9_-]{16,300}",  # Anthropic
            r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20,300}",  # OpenAI and compatible (sk-proj-…, sk-…)
            r"gh[pousr]_[A-Za-z0-9]{30,255}",  # GitHub classic and OAuth
            r"github_pat_[A-Za-z0-9_]{30,255}",  # GitHub fine-grained
            r"glpat-[A-Za-z0-9_-]{20,255}",  # GitLab personal access token
            r"xox[abeoprs]-[A-Za-z0-9-]{10,255}",  # Slack bot/user/refresh tokens
            r"xapp-[0-9]-[A-Za-z0-9-]{10,255}",  # Slack app-level (Socket Mode) token
            r"(?<![0-9])[0-9]{6,12}:[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",  # Telegram bot token
            r"(?<![0-9A-Z])(?:AKIA|ASIA)[0-9A-Z]{16}(?![0-9A-Z])",  # AWS access key id
        )
    )
)
# `scheme://user:password@` → `scheme://[redacted]@` (the user name goes too: it can be a token).
_URL_CREDENTIALS = re.compile(r"(?<=://)[^\s/?#@:]{0,256}:[^\s/?#@]{1,256}(?=@)")
_MASS_MENTIONS = re.compile(r"<!(channel|here|everyone)(\|[^>]*)?>|@(channel|here|everyone|all)\b|@所有人", re.IGNORECASE)

REDACTED = "[redacted]"
_MIN_SECRET = 8  # shorter values would redact ordinary words; real keys are long


def _forms(secret: str) -> set[str]:
    """The ways a secret shows up in text besides itself: URL-encoded (query strings, clone URLs)."""
    return {secret, quote(secret, safe=""), quote(secret), quote_plus(secret), quote_plus(secret, safe="")}


def url_credentials(value: str) -> list[str]:
    """The password (or a lone user name, which is how tokens ride in clone URLs) of a URL setting."""
    if "://" not in value or "@" not in value:
        return []
    try:
        parts = urlsplit(value.strip())
        username, password = parts.username, parts.password
    except ValueError:
        return []
    if password:
        return [unquote(password)]
    if not username or unquote(username).casefold() in unquote(parts.path).casefold():
        # `https://owner@host/owner/repo.git` names a user, not a token; redacting it would cut every
        # permalink of that owner's repositories
        return []
    return [unquote(username)]


def _secrets_in(value: object) -> Iterable[str]:
    """Every secret a setting holds: a `SecretStr`'s value, also inside a dict or list (ADMIN_TOKENS),
    and the credentials written into URL strings (REDIS_URL, REPO_URLS, any *_URL)."""
    if isinstance(value, SecretStr):
        yield value.get_secret_value()
    elif isinstance(value, str):
        yield from url_credentials(value)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _secrets_in(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _secrets_in(item)


class Redactor:
    """Replaces configured secret values (in any case, URL-encoded too) and common token shapes with a marker."""

    def __init__(self, secrets: Iterable[str]) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= _MIN_SECRET}, key=len, reverse=True)
        forms = sorted({f for s in self._secrets for f in _forms(s)}, key=len, reverse=True)
        # Longest first, so a secret's encoded form wins over a secret it happens to contain.
        self._pattern = re.compile("|".join(map(re.escape, forms)), re.IGNORECASE) if forms else None
        self._folded = [f.casefold() for f in forms]

    @classmethod
    def from_settings(cls, settings: object) -> "Redactor":
        fields = type(settings).model_fields  # type: ignore[attr-defined]
        return cls(secret for name in fields for secret in _secrets_in(getattr(settings, name, None)))

    def __call__(self, text: str) -> str:
        if self._pattern is not None:
            # Cheap substring checks first: most texts hold no secret, and then the regex never runs.
            folded = text.casefold()
            if any(form in folded for form in self._folded):
                text = self._pattern.sub(REDACTED, text)
        text = _URL_CREDENTIALS.sub(REDACTED, text)
        return _TOKEN_SHAPES.sub(REDACTED, text)


def defang_mentions(text: str) -> str:
    """@channel, @here, <!everyone>, @所有人 from model output must not notify a whole channel."""

    def defang(match: re.Match[str]) -> str:
        word = match.group(1) or match.group(3)
        return "@\u200b" + (word if word else "所有人")

    return _MASS_MENTIONS.sub(defang, text)
