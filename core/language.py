"""Decide whether to answer in Chinese or English.

Users paste English tracebacks with one Chinese sentence on top ("部署报错了，
帮忙看看"): that is a Chinese question. So a handful of Han characters is
enough, and so are two outside the names English speakers also write in Chinese
(昇腾, 华为…): "vllm-ascend 0.11.0 启动 报 ModuleNotFoundError" is typed by a
Chinese reader. Only names alone are weighed against the English words around them.
"""
from __future__ import annotations

import re

from core.messages import Language

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN_WORD = re.compile(r"[A-Za-z]{2,}")

# Enough Han characters to be a Chinese sentence, whatever else is pasted.
_SENTENCE = 5
# Below that, Chinese wins when Han characters are at least this share of the "words".
_SHARE = 0.5
# Names an English sentence may carry in Chinese; any other two Han characters are Chinese prose.
_NAMES = ("昇腾", "华为", "鲲鹏", "欧拉", "麒麟", "海光")
_PROSE = 2


def detect_language(text: str) -> Language:
    if not isinstance(text, str) or not text:
        return "en"
    han = 0
    for _ in _HAN.finditer(text):
        han += 1
        if han >= _SENTENCE:
            return "zh"
    if han == 0:
        return "en"
    prose = han - sum(text.count(name) * len(name) for name in _NAMES)
    if prose >= _PROSE:
        return "zh"
    words = sum(1 for _ in _LATIN_WORD.finditer(text))
    return "zh" if han / (han + words) >= _SHARE else "en"
