"""Reading the files the suite is given (reports, saved failures, request bodies, serve
scripts) with bounds: a file is read only if it is a regular file once links are resolved,
up to a size limit per kind of file, without ever waiting on a FIFO or reading a device
forever; standard input (``validate -``) up to the same limit; each refusal is a one-line
:class:`~chatconform.errors.ConfigError`. Every layer reads its inputs through here
(``validate`` in :mod:`chatconform.provider_schemas` too), so it is a leaf."""

from __future__ import annotations

import io
import math
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO

from chatconform.errors import ConfigError

#: The variable that raises every input file's size limit, in MiB (:func:`read_bounded`).
MAX_FILE_VARIABLE = "CHATCONFORM_MAX_FILE_MIB"
#: The largest file of each kind the suite reads unless :data:`MAX_FILE_VARIABLE` says more, in
#: MiB: several times the largest one a run writes (a shard's report of the main job is a few
#: MiB; a saved failure holds one shrunk case, or an unshrunk one of up to 100,000 items).
LIMITS_MIB = {"a chatconform report": 256, "a saved chatconform failure": 64, "request bodies": 256,
              "a serve script": 64}
DEFAULT_LIMIT_MIB = 64


def size_limit(what: str) -> int:
    """The most bytes a file of kind ``what`` may hold: :data:`LIMITS_MIB`, or
    :data:`MAX_FILE_VARIABLE` where that sets more (a malformed value is a ConfigError)."""
    limit: float = LIMITS_MIB.get(what, DEFAULT_LIMIT_MIB)
    text = os.environ.get(MAX_FILE_VARIABLE, "").strip()
    if text:
        try:
            given = float(text)
        except ValueError:
            given = math.nan
        if not math.isfinite(given) or given <= 0:
            raise ConfigError(f"{MAX_FILE_VARIABLE}={text!r}: expected a positive number of MiB")
        limit = max(limit, given)
    return int(limit * 2**20)


def open_bounded(path: str | Path, what: str, limit: int | None = None) -> BinaryIO:
    """An input file opened for reading, only if it is a regular file once links are
    resolved and holds at most ``limit`` bytes (default :func:`size_limit` of ``what``); the
    file raises ConfigError should it yield more as it is read (it grew). A FIFO, a device or
    a socket is refused before a byte is read, and the open never waits (``O_NONBLOCK``: a
    FIFO with no writer would block it). Each refusal is a one-line ConfigError naming the
    file; a size past the limit names the limit and :data:`MAX_FILE_VARIABLE`. ``what``
    names what the file should be ("a chatconform report")."""
    limit = size_limit(what) if limit is None else limit
    try:
        _refuse_unless_regular(os.stat(path), path, what, limit)  # before opening: opening a device can act
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file (cannot read {what})") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    try:
        _refuse_unless_regular(os.fstat(fd), path, what, limit)  # the file opened, should the name have moved
    except BaseException:
        os.close(fd)
        raise
    return io.BufferedReader(_Capped(io.FileIO(fd, "rb", closefd=True), path, what, limit), buffer_size=1 << 20)


def bounded_stream(stream: BinaryIO, name: str, what: str, limit: int | None = None) -> BinaryIO:
    """``stream``, open already (standard input), read to at most ``limit`` bytes (default
    :func:`size_limit` of ``what``): more is a one-line ConfigError naming ``name``, the limit
    and :data:`MAX_FILE_VARIABLE`. Closing it leaves ``stream`` open."""
    limit = size_limit(what) if limit is None else limit
    return io.BufferedReader(_Capped(stream, name, what, limit, owned=False), buffer_size=1 << 20)


def _refuse_unless_regular(info: os.stat_result, path: str | Path, what: str, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{path} is a folder, not {what}")
    if not stat.S_ISREG(info.st_mode):
        kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a file")
        raise ConfigError(f"{path} is {kind}, not a regular file: cannot read it as {what}")
    if info.st_size > limit:
        raise ConfigError(_too_large(path, what, limit, info.st_size))


def _too_large(path: str | Path, what: str, limit: int, size: int | None = None) -> str:
    held = f"{_mib(size)}, " if size is not None else ""
    return f"{path}: {held}more than the {_mib(limit)} {what} may hold (set {MAX_FILE_VARIABLE} to raise the limit)"


class _Capped(io.RawIOBase):
    """A binary stream read to at most ``limit`` bytes: more is a ConfigError. ``owned``: it
    is closed with this one."""

    def __init__(self, source: Any, path: str | Path, what: str, limit: int, *, owned: bool = True) -> None:
        self._file, self._owned = source, owned
        self._path, self._what, self._limit, self._read = path, what, limit, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        try:
            count = self._file.readinto(buffer)
        except OSError as exc:
            raise ConfigError(f"{self._path}: cannot read ({exc.strerror or exc})") from None
        self._read += count or 0
        if self._read > self._limit:
            raise ConfigError(_too_large(self._path, self._what, self._limit))
        return count

    def close(self) -> None:
        if self._owned:
            self._file.close()
        super().close()


def read_bounded(path: str | Path, what: str, limit: int | None = None) -> bytes:
    """The bytes of an input file, opened and read as :func:`open_bounded` says."""
    with open_bounded(path, what, limit) as stream:
        return stream.read()


def _mib(size: int) -> str:
    return f"{size / 2**20:,.1f} MiB" if size >= 2**20 else f"{size:,} bytes"


def read_input(path: str | Path, what: str, limit: int | None = None) -> str:
    """The text of an input file, read by :func:`read_bounded`; a one-line ConfigError for a
    missing file, a folder, a FIFO or device, a file past its size limit, or bytes that are
    not UTF-8 text (naming the line). ``what`` names what the file should be ("a report")."""
    data = read_bounded(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ConfigError(f"{path}:{line}: not {what} (not UTF-8 text: byte {exc.start})") from None
