"""Golden tests of the chunker on tiny files written for the tests."""
from __future__ import annotations

from core.index.chunk_code import chunk_c_like, chunk_config, chunk_python
from core.index.chunk_markdown import chunk_markdown
from core.index.chunker import chunk_file, decode, file_kind, should_index
from core.index.translations import parse_po, source_stem, translations_for

FAQ_ZH = """# FAQ

## 服务启动后请求无响应

### 问题现象描述

curl 一直没有返回。

### 解决措施

```bash
# 取消代理
unset http_proxy
```

## 日志里出现 MASTER\\_ADDR 缺失

### 解决措施

设置 MASTER_ADDR 后重启。
"""


def spans(chunks):  # type: ignore[no-untyped-def]
    return [(c.title, c.start_line, c.end_line) for c in chunks]


def test_chinese_faq_gives_one_unit_per_question_with_its_sub_sections() -> None:
    chunks = chunk_markdown(FAQ_ZH, "docs/zh/faq/faq.md")
    assert spans(chunks) == [
        ("FAQ > 服务启动后请求无响应", 3, 14),  # the bare page title lives on in the path, not in the lines
        ("FAQ > 日志里出现 MASTER_ADDR 缺失", 16, 20),
    ]
    assert "unset http_proxy" in chunks[0].text  # the fenced '# comment' is not a heading
    assert all(c.kind == "doc" for c in chunks)


def test_bold_question_lines_start_entries_in_faq_pages() -> None:
    text = "# 常见问题\n\n**Q: 显存不足怎么办？**\n\n减小批大小。\n\n**Q：精度下降怎么办？**\n\n回退敏感层。\n"
    assert spans(chunk_markdown(text, "docs/faq.md")) == [
        ("常见问题 > 显存不足怎么办？", 3, 5),
        ("常见问题 > 精度下降怎么办？", 7, 9),
    ]


def test_small_doc_sections_stay_together_and_big_ones_split_by_heading() -> None:
    small = "# Guide\n\nIntro.\n\n## Step\n\nDo it.\n"
    assert spans(chunk_markdown(small, "docs/guide.md")) == [("Guide", 1, 7)]
    big = "# Guide\n\nIntro.\n\n## One\n\n" + "line\n" * 60 + "\n## Two\n\n" + "more\n" * 30
    assert spans(chunk_markdown(big, "docs/guide.md")) == [("Guide", 1, 3), ("Guide > One", 5, 66), ("Guide > Two", 68, 99)]


def test_rst_underlined_headings() -> None:
    text = "Title\n=====\n\nIntro.\n\nSection\n-------\n\n" + "body\n" * 90
    assert [c.title for c in chunk_markdown(text, "docs/x.rst", rst=True)] == ["Title", "Title > Section"]


def test_python_by_top_level_definition_with_decorators() -> None:
    text = "import os\n\n\n@cache\ndef load():\n    return 1\n\n\nclass Runner:\n    def run(self):\n        pass\n"
    assert spans(chunk_python(text)) == [("module", 1, 3), ("load", 4, 6), ("Runner", 9, 11)]


def test_a_huge_class_is_cut_at_its_methods() -> None:
    methods = "".join(f"    def m{i}(self):\n" + "        x = 1\n" * 20 + "\n" for i in range(10))
    chunks = chunk_python("class Big:\n" + methods)
    assert len(chunks) > 1
    assert chunks[0].title == "Big" and chunks[1].title.startswith("Big.m")
    assert chunks[-1].end_line == len(("class Big:\n" + methods).rstrip().splitlines())  # up to the last code line


def test_c_windows_are_titled_by_their_function() -> None:
    text = "#include <x.h>\n\nint Scheduler::Run(int n)\n{\n    return n;\n}\n"
    chunks = chunk_c_like(text)
    assert spans(chunks) == [("Scheduler::Run", 1, 6)]


def test_config_whole_when_small() -> None:
    assert spans(chunk_config("a: 1\nb: 2\n")) == [("", 1, 2)]
    assert chunk_config("a: 1\n")[0].kind == "config"
    assert len(chunk_config("k: v\n" * 400)) > 1


def test_which_files_are_indexed() -> None:
    assert file_kind("docs/a.md") == "doc" and file_kind("README") == "doc"
    assert file_kind("x/model.py") == "python" and file_kind("k/op.cpp") == "c" and file_kind("run.sh") == "shell"
    assert file_kind("conf/serve.yaml") == "config" and file_kind("Dockerfile") == "config"
    assert file_kind("third_party/lib/a.py") is None and file_kind("x_pb2.py") is None and file_kind("a.png") is None
    assert file_kind("docs/locale/zh_CN/LC_MESSAGES/a.po") is None  # used as translations, not units
    assert should_index("conf/a.json", 1000) and not should_index("data/a.jsonl", 10_000_000)
    assert decode(b"\x00\x01binary") is None and decode("中文".encode()) == "中文"
    assert chunk_file("a.png", "x") == []


def test_gettext_catalogue_bridges_an_english_section() -> None:
    po = 'msgid ""\nmsgstr ""\n\nmsgid "Load the "\n"toolkit first."\nmsgstr "先加载工具包。"\n\nmsgid "Untranslated"\nmsgstr ""\n'
    pairs = parse_po(po)
    assert pairs == [("Load the toolkit first.", "先加载工具包。")]
    assert translations_for("## Fix\n\nLoad the\ntoolkit first.\n", pairs) == "先加载工具包。"
    assert translations_for("nothing here", pairs) == ""
    assert source_stem("docs/source/locale/zh_CN/LC_MESSAGES/user/faqs.po") == "docs/source/user/faqs"


def test_pathological_lines_are_cut_in_linear_time() -> None:
    # a backtracking heading pattern would take minutes on these lines; the title must still be right
    text = "# Title" + " " * 100_000 + "#\n\nbody\n\n**Q: why" + " " * 100_000 + "**\n\nbecause\n\n**Q: how**\n\nso\n"
    chunks = chunk_markdown(text, "docs/faq.md")
    assert [c.title for c in chunks] == ["Title", "Title > why", "Title > how"]
