"""Unpacking a .tar/.tar.gz/.tgz/.tar.bz2/.tar.xz/.zip archive that someone copied in by hand: untrusted input.

Only regular files and directories are written, each with O_EXCL|O_NOFOLLOW under a fresh directory,
so nothing lands outside it and nothing is written twice or through a link. A member with an absolute
path, a `..` component, a backslash or a drive letter, a device file or FIFO, or a symbolic/hard link
pointing outside the archive makes the whole archive refused. Links that stay inside are not created
(git history keeps them, and the index reads regular files only). Sizes and member counts are capped
by what is actually written, so a compressed bomb stops at the cap. Modes are 0644/0755: no setuid bits.
"""
from __future__ import annotations

import os
import posixpath
import shutil
import stat
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar", ".zip")
MAX_BYTES = 16 * 1024**3  # a full clone of the largest repository is ~2 GB
MAX_MEMBERS = 1_000_000
_MAX_LINK_TARGET = 4096
_CHUNK = 1024 * 1024


Opener = Callable[[], IO[bytes]]


class UnsafeArchive(Exception):
    """The archive is refused as a whole: the message names the first offending member."""


@dataclass(frozen=True)
class Extracted:
    files: int
    bytes: int
    links_skipped: int


@dataclass(frozen=True)
class _Member:
    name: str
    kind: str  # "file", "dir", "symlink", "hardlink", "other"
    size: int
    link: str
    executable: bool


def archive_stem(name: str) -> str | None:
    """The name without its archive suffix; None when `name` is not an archive this module reads."""
    lower = name.lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


def safe_member_path(name: str) -> str | None:
    """The member's relative path, normalised; '' for the archive root; None when it may leave the folder."""
    if not name or "\x00" in name or "\\" in name or name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        return None
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        return None
    return "/".join(parts)


def link_stays_inside(member: str, target: str, relative_to_root: bool = False) -> bool:
    """A link target that cannot leave the archive: relative, with `..` only as a leading run that does
    not climb above the root (after a named component, `..` would follow whatever that name links to)."""
    if not target or "\x00" in target or "\\" in target or target.startswith("/") or len(target) > _MAX_LINK_TARGET:
        return False
    parts = [p for p in target.split("/") if p not in ("", ".")]
    ups = 0
    while ups < len(parts) and parts[ups] == "..":
        ups += 1
    if any(p == ".." for p in parts[ups:]):
        return False
    depth = 0 if relative_to_root else len(posixpath.dirname(member).split("/")) if posixpath.dirname(member) else 0
    return ups <= depth


def extract_archive(archive: Path, dest: Path, max_bytes: int = MAX_BYTES, max_members: int = MAX_MEMBERS) -> Extracted:
    """Unpack `archive` into `dest` (created here, must not exist). Raises UnsafeArchive, or OSError when
    the file cannot be read; `dest` is removed on any failure."""
    dest.mkdir(mode=0o700, parents=False)
    try:
        return _extract(archive, dest, max_bytes, max_members)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, ValueError) as exc:
        shutil.rmtree(dest, ignore_errors=True)
        raise UnsafeArchive(f"not a readable archive ({type(exc).__name__}: {str(exc)[:120]})") from exc
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise


def _extract(archive: Path, dest: Path, max_bytes: int, max_members: int) -> Extracted:
    written = members = skipped = 0
    for member, read in _members(archive):
        members += 1
        if members > max_members:
            raise UnsafeArchive(f"more than {max_members} entries")
        path = safe_member_path(member.name)
        if path is None:
            raise UnsafeArchive(f"entry {member.name[:200]!r} would be written outside the folder")
        if member.kind == "other":
            raise UnsafeArchive(f"entry {path!r} is a device file, FIFO or socket")
        if member.kind in ("symlink", "hardlink"):
            if not link_stays_inside(path, member.link, relative_to_root=member.kind == "hardlink"):
                raise UnsafeArchive(f"link {path!r} points outside the archive ({member.link[:200]!r})")
            skipped += 1
            continue
        if not path:
            continue  # the archive's own root directory
        target = dest / path
        _make_parents(dest, path)
        if member.kind == "dir":
            try:
                target.mkdir(mode=0o755)
            except FileExistsError:
                if not stat.S_ISDIR(target.lstat().st_mode):
                    raise UnsafeArchive(f"entry {path!r} is both a file and a directory") from None
            continue
        if member.size > max_bytes - written:
            raise UnsafeArchive(f"more than {max_bytes} bytes unpacked")
        written += _write_file(target, read(), max_bytes - written, 0o755 if member.executable else 0o644, path)
    return Extracted(members, written, skipped)


def _make_parents(dest: Path, path: str) -> None:
    # Parents are real directories: nothing here ever creates a link, and mkdir never follows one.
    current = dest
    for part in path.split("/")[:-1]:
        current = current / part
        try:
            current.mkdir(mode=0o755)
        except FileExistsError:
            if not stat.S_ISDIR(current.lstat().st_mode):
                raise UnsafeArchive(f"entry {path!r} goes through a file") from None


def _write_file(target: Path, source: IO[bytes], budget: int, mode: int, shown: str) -> int:
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    except FileExistsError:
        raise UnsafeArchive(f"entry {shown!r} appears twice") from None
    total = 0
    with os.fdopen(fd, "wb") as out, source:
        while chunk := source.read(_CHUNK):
            total += len(chunk)
            if total > budget:
                raise UnsafeArchive("more bytes unpacked than the limit allows")
            out.write(chunk)
    return total


def _members(archive: Path) -> Iterator[tuple[_Member, Opener]]:
    if archive.name.lower().endswith(".zip"):
        yield from _zip_members(archive)
    else:
        yield from _tar_members(archive)


def _tar_members(archive: Path) -> Iterator[tuple[_Member, Opener]]:
    with tarfile.open(archive, "r:*") as tar:
        for info in tar:
            kind = ("file" if info.isreg() else "dir" if info.isdir() else "symlink" if info.issym()
                    else "hardlink" if info.islnk() else "other")
            member = _Member(info.name, kind, info.size, info.linkname, bool(info.mode & 0o111))

            def read(info: tarfile.TarInfo = info) -> IO[bytes]:
                handle = tar.extractfile(info)
                if handle is None:
                    raise UnsafeArchive(f"entry {info.name[:200]!r} has no data")
                return handle

            yield member, read


def _zip_members(archive: Path) -> Iterator[tuple[_Member, Opener]]:
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            unix_mode = info.external_attr >> 16 if info.create_system == 3 else 0
            file_type = stat.S_IFMT(unix_mode)
            if info.is_dir() or file_type == stat.S_IFDIR:
                kind = "dir"
            elif file_type == stat.S_IFLNK:
                kind = "symlink"
            elif file_type in (0, stat.S_IFREG):
                kind = "file"
            else:
                kind = "other"
            link = ""
            if kind == "symlink":
                if info.file_size > _MAX_LINK_TARGET:
                    raise UnsafeArchive(f"link {info.filename[:200]!r} has an oversized target")
                link = zf.read(info).decode("utf-8", errors="replace")
            member = _Member(info.filename, kind, info.file_size, link, bool(unix_mode & 0o111))

            def read(info: zipfile.ZipInfo = info) -> IO[bytes]:
                return zf.open(info)

            yield member, read
