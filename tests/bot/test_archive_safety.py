"""Archives copied in by hand are untrusted: bot/archive.py unpacks regular files and folders only,
inside its own folder, within size and count caps; a hostile archive is refused as a whole."""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from bot.archive import UnsafeArchive, archive_stem, extract_archive, link_stays_inside, safe_member_path


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], mode: str = "w:gz") -> Path:
    with tarfile.open(path, mode) as tar:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def _file(name: str, data: bytes = b"x\n") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info, None


def test_a_plain_archive_unpacks_and_drops_setuid_bits(tmp_path: Path) -> None:
    tool, data = _file("pkg/tool.sh", b"#!/bin/sh\n")
    tool.mode = 0o4755
    archive = _tar(tmp_path / "vllm-ascend.tar.gz", [_file("pkg/README.md"), (tool, data), _file("./top.txt")])
    done = extract_archive(archive, tmp_path / "out")
    assert (tmp_path / "out" / "pkg" / "README.md").read_text() == "x\n"
    assert stat.S_IMODE((tmp_path / "out" / "pkg" / "tool.sh").stat().st_mode) == 0o755
    assert (done.files, done.bytes) == (3, len("x\n") * 2 + len("#!/bin/sh\n"))


@pytest.mark.parametrize("members, says", [
    ([_file("../escape.txt")], "outside the folder"),
    ([_file("ok/../../escape.txt")], "outside the folder"),
    ([_file("/etc/escape.txt")], "outside the folder"),
    ([_file("C:/escape.txt")], "outside the folder"),
    ([_file("dir\\..\\escape.txt")], "outside the folder"),
    ([_link("evil", "/etc")], "points outside"),
    ([_link("sub/evil", "../../etc/passwd")], "points outside"),
    ([_link("sub/evil", "x/../../../etc")], "points outside"),
    ([_link("hard", "../outside", tarfile.LNKTYPE)], "points outside"),
    ([_file("a.txt"), _file("a.txt")], "appears twice"),
])
def test_hostile_tar_is_refused_and_nothing_is_left(tmp_path: Path, members, says: str) -> None:  # type: ignore[no-untyped-def]
    archive = _tar(tmp_path / "evil.tar.gz", members)
    with pytest.raises(UnsafeArchive, match=says):
        extract_archive(archive, tmp_path / "out")
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape.txt").exists()


def test_a_symlink_then_a_file_through_it_never_writes_outside(tmp_path: Path) -> None:
    # The classic: "link -> /target" then "link/file". The link is refused before anything is written.
    outside = tmp_path / "target"
    outside.mkdir()
    archive = _tar(tmp_path / "evil.tar", [_link("link", str(outside)), _file("link/pwned.txt")], mode="w")
    with pytest.raises(UnsafeArchive):
        extract_archive(archive, tmp_path / "out")
    assert list(outside.iterdir()) == []


def test_links_that_stay_inside_are_skipped_not_created(tmp_path: Path) -> None:
    archive = _tar(tmp_path / "tree.tar.gz", [_file("docs/README.md"), _link("docs/link.md", "../README.md"),
                                               _file("README.md")])
    done = extract_archive(archive, tmp_path / "out")
    assert done.links_skipped == 1 and not (tmp_path / "out" / "docs" / "link.md").exists()
    assert (tmp_path / "out" / "README.md").exists()


def test_device_files_and_fifos_are_refused(tmp_path: Path) -> None:
    fifo = tarfile.TarInfo("pipe")
    fifo.type = tarfile.FIFOTYPE
    with pytest.raises(UnsafeArchive, match="device file, FIFO"):
        extract_archive(_tar(tmp_path / "a.tar", [(fifo, None)], mode="w"), tmp_path / "out")
    device = tarfile.TarInfo("dev/sda")
    device.type = tarfile.BLKTYPE
    with pytest.raises(UnsafeArchive, match="device file"):
        extract_archive(_tar(tmp_path / "b.tar", [(device, None)], mode="w"), tmp_path / "out2")


def test_size_and_count_caps_stop_a_bomb(tmp_path: Path) -> None:
    zeros = _tar(tmp_path / "bomb.tar.gz", [_file("zeros.bin", b"\0" * 200_000)])
    assert zeros.stat().st_size < 5_000  # compresses to almost nothing
    with pytest.raises(UnsafeArchive, match="bytes"):
        extract_archive(zeros, tmp_path / "out", max_bytes=100_000)
    many = _tar(tmp_path / "many.tar.gz", [_file(f"f{i}.txt") for i in range(20)])
    with pytest.raises(UnsafeArchive, match="more than 10 entries"):
        extract_archive(many, tmp_path / "out2", max_members=10)
    assert not (tmp_path / "out").exists() and not (tmp_path / "out2").exists()


def test_zip_with_traversal_or_an_escaping_symlink_is_refused(tmp_path: Path) -> None:
    traversal = tmp_path / "evil.zip"
    with zipfile.ZipFile(traversal, "w") as zf:
        zf.writestr("../escape.txt", "x")
    with pytest.raises(UnsafeArchive, match="outside the folder"):
        extract_archive(traversal, tmp_path / "out")
    symlink = tmp_path / "link.zip"
    with zipfile.ZipFile(symlink, "w") as zf:
        info = zipfile.ZipInfo("evil")
        info.create_system = 3
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        zf.writestr(info, "/etc/passwd")
    with pytest.raises(UnsafeArchive, match="points outside"):
        extract_archive(symlink, tmp_path / "out2")
    ok = tmp_path / "ok.zip"
    with zipfile.ZipFile(ok, "w") as zf:
        zf.writestr("name-main/README.md", "# hi\n")
    extract_archive(ok, tmp_path / "out3")
    assert (tmp_path / "out3" / "name-main" / "README.md").read_text() == "# hi\n"


def test_a_corrupt_archive_is_one_clean_refusal(tmp_path: Path) -> None:
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00 not really gzip")
    with pytest.raises(UnsafeArchive, match="not a readable archive"):
        extract_archive(broken, tmp_path / "out")


def test_path_and_link_rules() -> None:
    assert safe_member_path("./a/./b") == "a/b" and safe_member_path(".") == ""
    assert safe_member_path("a/../b") is None and safe_member_path("a\x00b") is None
    assert link_stays_inside("a/b/link", "../c") and link_stays_inside("a/link", "../c")
    assert not link_stays_inside("link", "../c") and not link_stays_inside("a/link", "b/../../c")
    assert archive_stem("MindIE-LLM-master.TAR.GZ") == "MindIE-LLM-master" and archive_stem("x.bundle") is None
