"""The EncodingAESKey WeCom shows in its console, checked and decoded (no crypto library needed,
so settings checks can use it without importing the cipher)."""
from __future__ import annotations

import base64
import binascii

KEY_CHARACTERS = 43  # base64 of 32 bytes without its trailing '='


def aes_key(encoding_aes_key: str) -> bytes:
    """The 32-byte AES key; ValueError naming WECOM_ENCODING_AES_KEY (never its value) when it cannot be one."""
    if len(encoding_aes_key) != KEY_CHARACTERS:
        raise ValueError(f"WECOM_ENCODING_AES_KEY must be {KEY_CHARACTERS} characters (32 bytes of key)")
    try:
        key = base64.b64decode(encoding_aes_key + "=", validate=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError("WECOM_ENCODING_AES_KEY is not valid base64") from exc
    return key  # 43 base64 characters always decode to 32 bytes
