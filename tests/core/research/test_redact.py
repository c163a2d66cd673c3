"""Redaction: configured secrets in every form they travel in, credentials in URLs, and token shapes."""
from __future__ import annotations

import time
from urllib.parse import quote, quote_plus

import pytest
from pydantic import SecretStr

from core.research.redact import REDACTED, Redactor

SECRET = "Sup3r/Secret+Key=Value"  # has characters URL encoding changes


@pytest.mark.parametrize(
    "form",
    [
        SECRET,
        SECRET.lower(),
        SECRET.upper(),
        SECRET.swapcase(),
        quote(SECRET, safe=""),  # Sup3r%2FSecret%2BKey%3DValue
        quote(SECRET, safe="").lower(),  # %2f: encoders differ in hex case
        quote(SECRET),  # the slash left as is
        quote_plus(SECRET),
    ],
)
def test_a_configured_secret_is_redacted_in_each_form(form: str) -> None:
    redact = Redactor([SECRET])
    out = redact(f"curl 'https://api.example/v1?key={form}&x=1'")
    assert out == f"curl 'https://api.example/v1?key={REDACTED}&x=1'", form


GHP = "ghp_" + "A1b2C3d4E5" * 4  # 40 characters after the prefix
SHAPES = {
    "slack bot": "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
    "slack user": "xoxp-123456789012-123456789012-123456789012-0123456789abcdef0123456789abcdef",
    "slack app": "xapp-1-A0123456789-1234567890123-0123456789abcdef0123456789abcdef",
    "telegram": "1234567890:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
    "github classic": GHP,
    "github oauth": "gho_" + "z9Y8x7W6v5" * 4,
    "github fine-grained": "github_pat_11ABCDEFG0" + "a1B2c3D4e5_" * 6,
    "gitlab": "glpat-Ab1Cd2Ef3Gh4Ij5Kl6Mn",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "openai": "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0",
    "openai legacy": "sk-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8Qr9St0Uv1Wx2Yz3Ab4Cd5E",
    "anthropic": "sk-ant-api03-" + "Ab1Cd2Ef3G" * 9 + "AA",
}


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_token_shapes_are_redacted_without_being_configured(name: str) -> None:
    token = SHAPES[name]
    out = Redactor([])(f"the issue body says: export TOKEN={token} # please help")
    assert token not in out and out == f"the issue body says: export TOKEN={REDACTED} # please help", name


def test_a_telegram_token_inside_the_api_url_path() -> None:
    url = f"https://api.telegram.org/bot{SHAPES['telegram']}/getUpdates"
    assert Redactor([])(url) == f"https://api.telegram.org/bot{REDACTED}/getUpdates"


def test_ordinary_text_is_left_alone() -> None:
    text = (
        "at 12:30 vllm 0.9.1 on localhost:8080, commit 0123456789abcdef0123456789abcdef01234567, "
        "task-scheduler-for-the-ascend-backend-v2, AKIA in prose, sk-learn, xoxb, ghp_short, "
        "ports 1234567:8080 and ids 123456:abc"
    )
    assert Redactor([])(text) == text


def test_credentials_in_any_url_are_redacted() -> None:
    redact = Redactor([])
    assert redact("redis://default:hunter2@10.0.0.5:6379/0") == f"redis://{REDACTED}@10.0.0.5:6379/0"
    assert redact("redis://:pw@localhost") == f"redis://{REDACTED}@localhost"
    assert redact("git clone https://oauth2:tok3n@gitlab.example/x.git") == f"git clone https://{REDACTED}@gitlab.example/x.git"
    assert redact("https://github.com/a/b and ssh://git@host/x") == "https://github.com/a/b and ssh://git@host/x"


def test_settings_url_credentials_become_secrets_even_where_written_without_the_url(make_settings) -> None:
    settings = make_settings(
        redis_url="redis://default:RedisPassw0rd@redis.internal:6379/0",
        repo_urls={
            "vllm-project/vllm-ascend": "https://x-access-token:RepoT0kenValue@git.internal/vllm-ascend.git",
            "Ascend/MindIE": "https://UsernameT0kenOnly@gitcode.example/MindIE.git",
        },
        slack_bot_token=SecretStr("plain-configured-secret-1"),
    )
    redact = Redactor.from_settings(settings)
    leaked = "pw RedisPassw0rd / REPOT0KENVALUE / usernamet0kenonly / Plain-Configured-Secret-1"
    assert redact(leaked) == f"pw {REDACTED} / {REDACTED} / {REDACTED} / {REDACTED}"
    assert "git.internal" in redact("https://x-access-token:RepoT0kenValue@git.internal/vllm-ascend.git")


def test_a_user_name_that_is_the_repository_owner_is_not_a_secret(make_settings) -> None:
    settings = make_settings(repo_urls={"verylucky01/MindIE-LLM": "https://verylucky01@github.com/verylucky01/MindIE-LLM.git"})
    link = "https://github.com/verylucky01/MindIE-LLM/blob/abc123/README.md#L1"
    assert Redactor.from_settings(settings)(link) == link  # citations of that owner keep working


def test_percent_encoded_password_in_a_url_setting(make_settings) -> None:
    settings = make_settings(redis_url="redis://default:p%40ss%2Fw0rd%21@redis.internal:6379/0")
    assert Redactor.from_settings(settings)("the password is p@ss/w0rd!") == f"the password is {REDACTED}"


def test_hostile_inputs_are_redacted_in_linear_time() -> None:
    redact = Redactor([SECRET, "another-secret-value"])
    hostile = [
        "[" * 200_000,
        "1" * 200_000,
        ("://" + "a" * 300) * 700,
        ("://a:" + "b" * 300) * 600,
        ("sk-" + "a" * 299) * 650,
        "xoxb-" * 40_000,
        ("123456789:" + "A" * 34 + "!") * 4_500,
        SECRET[:-1] * 9_000,
        "%2F" * 70_000,
    ]
    for text in hostile:
        started = time.perf_counter()
        redact(text)
        assert time.perf_counter() - started < 0.5, text[:20]
