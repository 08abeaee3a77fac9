"""Reading a file that somebody else named: a regular file, its size bounded before a byte is read.

Every reader of a user's or a certificate's file goes through :func:`read_regular` (input
files, grid files, certificates). ``Path.read_bytes`` on a FIFO blocks until a writer
appears, and on a character device such as ``/dev/zero`` reads until memory runs out; a
size check by ``stat`` does not catch either (both report size 0). Imports nothing of the
package, so the independent re-check may use it too.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["NotARegularFile", "TooLarge", "read_regular"]


class NotARegularFile(OSError):
    """The path names a folder, a FIFO, a device or a socket."""


class TooLarge(OSError):
    """The file is larger than the cap its reader states."""


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
