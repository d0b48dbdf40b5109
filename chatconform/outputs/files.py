"""The files a run writes (the report, the JUnit XML, saved failures, timings), made to survive
whatever happens during the run: each is resolved to an absolute path and checked when the run
starts (an implementation under test may ``chdir``, and a FIFO must never be opened), locked
against a second run writing the same file, and written atomically (a full disk or a crash
leaves the previous file whole, never a truncated one).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from pathlib import Path

from chatconform.errors import ConfigError

#: What a path that is not a regular file is, as the refusal names it.
_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"))


def target(path: str | Path, what: str = "the report") -> Path:
    """The absolute path ``path`` names now, so a later chdir does not move it; a ConfigError
    unless it is a writable regular file or a new file in an existing folder. Checked with
    ``stat`` only: opening a FIFO would block until something reads it."""
    resolved = Path(os.path.realpath(path))
    try:
        mode: int | None = os.stat(resolved).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ConfigError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    if mode is None:
        if not resolved.parent.is_dir():
            raise ConfigError(f"cannot write {what} {path}: no folder {resolved.parent}")
    elif stat.S_ISDIR(mode):
        raise ConfigError(f"cannot write {what} {path}: it is a folder")
    elif not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise ConfigError(f"cannot write {what} {path}: it is {kind}, not a regular file")
    elif not os.access(resolved, os.W_OK):
        raise ConfigError(f"cannot write {what} {path}: Permission denied")
    return resolved


def write_atomic(path: str | Path, data: str | bytes | list[bytes], what: str = "the report") -> None:
    """Write ``data`` (or its chunks in order, never joined in memory) to ``path`` whole or not
    at all: into a temporary file in the same folder, flushed to the disk, then renamed over
    ``path``. On any OSError the temporary file is removed, the old file stays as it was, and
    the error is a one-line ConfigError."""
    path = Path(path)
    chunks = [data.encode("utf-8")] if isinstance(data, str) else [data] if isinstance(data, bytes) else data
    temp: Path | None = None
    try:
        try:
            mode: int | None = stat.S_IMODE(os.stat(path).st_mode)  # a replaced file keeps its mode
        except FileNotFoundError:
            mode = None
        temp = path.with_name(f".{path.name[:100]}.{secrets.token_hex(6)}.tmp")
        with open(os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.writelines(chunks)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
        temp = None
    except OSError as exc:
        raise ConfigError(f"cannot write {what} {path}: {exc.strerror or exc}") from None
    finally:
        if temp is not None:  # failed or interrupted: no half-written file left behind
            with contextlib.suppress(OSError):
                os.unlink(temp)
    with contextlib.suppress(OSError):  # the rename itself on the disk too, where the folder can say
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


@contextlib.contextmanager
def locked(path: Path, shown: str | Path, what: str = "the report", option: str = "--report") -> Iterator[None]:
    """Hold an exclusive lock on ``<path>.lock`` until the block ends, so that a second run
    writing the same file fails at its start instead of silently overwriting this one's.

    The lock is a ``flock``: it dies with its process, so a lock file a killed run left behind
    blocks nothing. The lock file is removed on release, while the lock is still held.
    """
    lock = path.with_name(path.name + ".lock")
    fd = _acquire(lock, f"{what} {shown}", option)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
        os.close(fd)


def _acquire(lock: Path, named: str, option: str) -> int:
    """A descriptor of ``lock`` holding its flock; a ConfigError when another holds it."""
    while True:
        try:
            # O_NONBLOCK: a FIFO planted at the lock's path must not block the open either.
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NONBLOCK, 0o666)
        except OSError as exc:
            raise ConfigError(f"cannot write {named}: cannot create its lock {lock}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ConfigError(f"cannot write {named}: its lock {lock} is not a regular file")
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # A run releasing the lock removes the file: lock the one on disk, not the removed one.
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                return fd
        except BlockingIOError:
            os.close(fd)
            raise ConfigError(f"another chatconform run is writing {named} (lock {lock}); wait for it or "
                              f"choose another {option}") from None
        except FileNotFoundError:
            pass  # removed between the lock and the check: try again
        except OSError as exc:
            os.close(fd)
            raise ConfigError(f"cannot write {named}: cannot lock {lock}: {exc.strerror or exc}") from None
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)


@contextlib.contextmanager
def claim(path: str | Path | None, what: str = "the report", option: str = "--report") -> Iterator[Path | None]:
    """What a run does at its start for each file it will write: resolve and check it
    (:func:`target`) and lock it (:func:`locked`) until the block ends; yields the absolute
    path to write at the end. ``None`` (the option not given) claims nothing."""
    if path is None:
        yield None
        return
    resolved = target(path, what)
    with locked(resolved, path, what, option):
        yield resolved
