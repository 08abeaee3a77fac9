"""Reading a file that somebody else named: a regular file, its size bounded before a byte is read;
and writing one without blocking in ``open``.

Every reader of a user's or a certificate's file goes through :func:`read_regular` (input
files, grid files, claims and corpus files, certificates), and every reader of text through
:func:`decode_text` (or :func:`read_text`, the two together), so a file that is not UTF-8 is
refused in one wording everywhere: the byte, its line and the remedy (a UTF-16 file was
"not UTF-8 (byte 0)" to verify and Python's codec text to reproduce and the corpus, issue 22). ``Path.read_bytes`` on a FIFO blocks until a writer
appears, and on a character device such as ``/dev/zero`` reads until memory runs out; a
size check by ``stat`` does not catch either (both report size 0). Imports nothing of the
package, so the independent re-check may use it too.

Every writer of a path the user named goes through :func:`open_output` (certificates,
reports, sweep results, pictures), and the options that name one are checked by
:func:`check_writable` before any work. ``open(path, "w")`` on a FIFO blocks until a reader
appears, possibly for ever and after all the work. A FIFO is opened non-blocking instead:
with no reader that fails at once (ENXIO) and is refused; with one, the descriptor the
check opened is kept for the writer (closing it would end the reader's input). A folder or
a socket is refused; a character device (``/dev/null``, ``/dev/full``, a terminal) is
written as asked.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import IO, Any, Callable

__all__ = ["NotARegularFile", "NotText", "TooLarge", "check_writable", "decode_text", "json_loads", "open_output",
           "read_regular", "read_text", "save_figure"]


class NotARegularFile(OSError):
    """The path names a folder, a FIFO, a device or a socket."""


class TooLarge(OSError):
    """The file is larger than the cap its reader states."""


class NotText(OSError):
    """The file's bytes are not UTF-8 text."""


def read_regular(path: "str | Path", max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``max_bytes`` of them.

    Opened without blocking (a FIFO would otherwise block in ``open``), checked by
    ``fstat`` on the open descriptor (no race with a rename), then read; a file that
    grows past the cap while it is read is refused too. Raises :class:`NotARegularFile`,
    :class:`TooLarge` or the ``OSError`` of the system call, each with ``filename``."""
    name = str(path)
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise NotARegularFile(0, "is a folder, not a file", name)
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFile(0, "is not a regular file (a FIFO, a device or a socket)", name)
        if st.st_size > max_bytes:
            raise TooLarge(0, f"{st.st_size} bytes is too large (at most {max_bytes})", name)
        chunks, total = [], 0
        while True:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise TooLarge(0, f"more than {max_bytes} bytes (it grew while read)", name)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode_text(data: bytes, name: str) -> str:
    """``data`` read as UTF-8 text (a leading byte-order mark dropped), or :class:`NotText` with
    ``filename`` ``name`` and a ``strerror`` naming the first byte that is not UTF-8, its line and
    offset, and the remedy."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise NotText(0, f"not UTF-8 text (byte 0x{data[exc.start]:02x} at line {line}, offset {exc.start}); "
                      "save the file as UTF-8", name) from None


def read_text(path: "str | Path", max_bytes: int) -> str:
    """The text of the regular file ``path``: :func:`read_regular` then :func:`decode_text`; raises
    what they raise."""
    return decode_text(read_regular(path, max_bytes), str(path))


#: descriptors of output FIFOs opened by :func:`check_writable` (a reader was there), kept for
#: :func:`open_output`: closing one before the write would hand the reader an end of file
_HELD: dict[str, int] = {}


def json_loads(text: str, *, parse_int: Callable[[str], Any], parse_float: Callable[[str], Any]) -> Any:
    """The one parse of a JSON text somebody else wrote (input files, grids, records, certificates, an
    oracle certificate's recorded input): a key given twice in one object reads differently in different
    parsers (last-wins turned a record's claimed_eps 100 into 0.1: adv37 D1) and the constants NaN and
    Infinity are no numbers, so both raise ValueError, as json.JSONDecodeError (a ValueError) does;
    RecursionError past Python's nesting. Each reader keeps its own number hooks (exact text, or
    :func:`dpverify.numtext.json_int` / ``json_float``) and its own wording of the refusal."""
    return json.loads(text, parse_int=parse_int, parse_float=parse_float, parse_constant=_no_constant,
                      object_pairs_hook=_no_duplicates)


def _no_constant(word: str) -> Any:
    raise ValueError(f"{word} is not a number here (numbers must be finite)")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"key {str(key)[:40]!r} appears twice in one object")
        out[key] = value
    return out


def _open_for_writing(name: str) -> int:
    """A write descriptor of ``name`` (created if missing, not truncated), opened without
    blocking; a FIFO with no reader is :class:`NotARegularFile` (ENXIO)."""
    flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(name, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise NotARegularFile(errno.ENXIO, "is a FIFO with no reader (writing to it would wait for one)",
                                  name) from None
        raise


def check_writable(path: "str | Path") -> None:
    """Refuse an output path that exists and cannot take a file without blocking, before any
    work: a folder, a socket, or a FIFO with no reader (:class:`NotARegularFile`, with
    ``filename``). A FIFO with a reader is opened here and its descriptor kept for
    :func:`open_output`. A missing path, a regular file or a device passes (the folder and
    permission checks are the caller's)."""
    name = str(path)
    try:
        st = os.stat(name)
    except OSError:
        return  # missing, or a path the caller's folder checks report
    if stat.S_ISDIR(st.st_mode):
        raise NotARegularFile(errno.EISDIR, "is a folder, not a file", name)
    if stat.S_ISSOCK(st.st_mode):
        raise NotARegularFile(0, "is a socket, not a file", name)
    if stat.S_ISFIFO(st.st_mode) and name not in _HELD:
        _HELD[name] = _open_for_writing(name)


def open_output(path: "str | Path", binary: bool = False, **kwargs: Any) -> IO[Any]:
    """``path`` opened for writing (created, or a regular file truncated) without blocking in
    ``open``: a FIFO with no reader raises :class:`NotARegularFile` at once (it may have
    appeared, or lost its reader, since :func:`check_writable`), a folder ``IsADirectoryError``.
    On a FIFO with a reader or a device the descriptor is made blocking again, so that a
    slow reader slows the writes instead of failing them. ``kwargs`` go to ``os.fdopen``
    (encoding, newline)."""
    name = str(path)
    fd = _HELD.pop(name, None)
    if fd is None:
        fd = _open_for_writing(name)
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            os.ftruncate(fd, 0)
        else:
            os.set_blocking(fd, True)
        return os.fdopen(fd, "wb" if binary else "w", **kwargs)
    except BaseException:
        os.close(fd)
        raise


def save_figure(fig: Any, path: "str | Path", **kwargs: Any) -> None:
    """``fig.savefig`` (matplotlib) into :func:`open_output` of ``path``, in the format its
    suffix names (matplotlib opens a path itself, blocking on a FIFO)."""
    fmt = Path(path).suffix.lower().lstrip(".") or None
    with open_output(path, binary=True) as fh:
        fig.savefig(fh, format=fmt, **kwargs)
