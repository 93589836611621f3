"""Bounded reading of untrusted input: files, streams and JSON text from elsewhere.

Everything a stranger can hand the toolkit (records, deal files, configs, bot manifests, ``compose.json``,
bot-protocol lines, web bodies) is read through here, so that no input can make a reader run for long, use
much memory, or fail with a traceback:

| bound                | default              | what it stops                                                       |
|----------------------|----------------------|---------------------------------------------------------------------|
| bytes of one input   | the caller's cap     | a file or stream that never ends (``/dev/zero``, a FIFO) or is huge |
| seconds of waiting   | :data:`READ_SECONDS` | a pipe or FIFO that never delivers, or delivers slowly forever      |
| JSON nesting depth   | :data:`MAX_DEPTH`    | ``[[[[...]]]]`` (Python's parser would raise ``RecursionError``)    |
| digits of an integer | :data:`MAX_INT_DIGITS` | a 5,000-digit integer (slow to convert, then a ``ValueError``)    |

The size is checked before anything is read where the file says its size (``fstat``), and a stream is read
in chunks of at most :data:`CHUNK` bytes, never past the cap plus one byte (regular files are not timed);
:func:`iter_chunks` and :func:`iter_lines` give a long input piece by piece, in bounded memory. Depth is
measured on the text with its strings removed (one regular expression and a NumPy cumulative sum: linear, no
recursion) before the text is parsed. Every failure is a :class:`BoundedInputError` whose message names the
input (``what``) and the bound it broke, in one line.
"""

from __future__ import annotations

import errno
import json
import os
import re
import select
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

__all__ = ["BoundedInputError", "CHUNK", "MAX_DEPTH", "MAX_INT_DIGITS", "READ_SECONDS", "check_depth",
           "iter_chunks", "iter_json_lines", "iter_lines", "loads", "read_bytes", "read_json", "read_text"]

MAX_DEPTH = 64  # nesting of objects and arrays; the deepest real input (a record's steps) is 4
MAX_INT_DIGITS = 40  # digits of one JSON integer; seeds are below 2**64 (20 digits)
READ_SECONDS = 1.0  # longest wait, in all, for a stream (pipe, FIFO, device) to deliver an input
CHUNK = 1 << 16  # bytes read from a stream at a time

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_DEPTH_STEP = np.zeros(256, dtype=np.int8)
_DEPTH_STEP[[ord("["), ord("{")]] = 1
_DEPTH_STEP[[ord("]"), ord("}")]] = -1


class BoundedInputError(ValueError):
    """Input over one of the bounds of this module, unreadable, or not valid JSON; the message names it."""


def _fail(what: str, message: str) -> BoundedInputError:
    return BoundedInputError(f"{what}: {message}" if what else message)


def read_bytes(path: str | os.PathLike[str], max_bytes: int, *, what: str = "",
               seconds: float = READ_SECONDS) -> bytes:
    """At most ``max_bytes`` bytes of the file at ``path``: the whole file, or a :class:`BoundedInputError`.

    A regular file larger than the cap is refused from its size alone, before a byte is read. Anything else
    (a pipe, a FIFO, a character device) is read in chunks until its end, the cap plus one byte (an error), or
    ``seconds`` spent waiting for it in all (an error). Opening a FIFO that no process writes waits for a
    writer; the open is non-blocking, so it does not hang either."""
    return b"".join(iter_chunks(path, max_bytes, what=what, seconds=seconds))


def iter_chunks(path: str | os.PathLike[str], max_bytes: int, *, what: str = "",
                seconds: float = READ_SECONDS) -> Iterator[bytes]:
    """The bytes of the file at ``path`` in chunks of at most :data:`CHUNK`, within the bounds of
    :func:`read_bytes` (the same errors, raised when the chunk that breaks a bound is due): for a reader that
    handles an input piece by piece in bounded memory (e.g. with :func:`iter_lines`). Only the time spent
    waiting for a stream counts against ``seconds``, not the time the caller spends on the chunks."""
    what = what or os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise _cannot_read(what, e) from None
    except (ValueError, TypeError) as e:  # an embedded NUL, a path of the wrong type
        raise _fail(f"cannot read {what}", str(e)) from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _cannot_read(what, IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR)))
        regular = stat.S_ISREG(info.st_mode)
        if regular:
            if info.st_size > max_bytes:
                raise _fail(what, f"{info.st_size:,} bytes, more than the {max_bytes:,} allowed")
            os.set_blocking(fd, True)
        yield from _chunks(fd, max_bytes, None if regular else seconds, what)
    except OSError as e:
        raise _cannot_read(what, e) from None
    finally:
        os.close(fd)


def _cannot_read(what: str, e: OSError) -> BoundedInputError:
    return BoundedInputError(f"cannot read {what}: {e.strerror or e}")


def _chunks(fd: int, max_bytes: int, seconds: float | None, what: str) -> Iterator[bytes]:
    """Chunks of ``fd`` up to its end; past ``max_bytes`` (at most one byte is read beyond it) or, for a stream
    (``seconds`` given), past ``seconds`` of waiting in all: an error."""
    size, waited = 0, 0.0
    while True:
        if seconds is not None:
            start = time.monotonic()
            ready = select.select([fd], [], [], max(seconds - waited, 0.0))[0]
            waited += time.monotonic() - start
            if not ready:
                raise _fail(what, f"no end of input within {seconds:g} s (a pipe or device that does not end?)")
        try:
            chunk = os.read(fd, min(CHUNK, max_bytes + 1 - size))
        except BlockingIOError:
            continue
        if not chunk:
            return
        size += len(chunk)
        if size > max_bytes:  # a stream, or a regular file that grew while it was read
            raise _fail(what, f"more than the {max_bytes:,} bytes allowed")
        yield chunk


def iter_lines(chunks: Iterable[bytes], max_line: int) -> Iterator[bytes]:
    """The lines of a byte stream given in chunks (e.g. by :func:`iter_chunks`), each with its ``\\n`` (the last
    one may lack it), in memory bounded by ``max_line`` plus one chunk.

    A line longer than ``max_line`` bytes (its newline counted) comes as its first ``max_line + 1`` bytes and
    the rest of it, up to its newline, is read but not kept: ``len(line) > max_line`` tells the caller, who
    refuses the input or answers the line with an error and goes on."""
    buf, skipping = bytearray(), False
    for chunk in chunks:
        start = 0
        while start < len(chunk):
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            if not skipping:
                buf += chunk[start:stop]
                if len(buf) > max_line:
                    yield bytes(buf[: max_line + 1])
                    buf.clear()
                    skipping = True
                elif end >= 0:
                    yield bytes(buf)
                    buf.clear()
            if end >= 0:
                skipping = False
            start = stop
    if buf:
        yield bytes(buf)


def read_text(path: str | os.PathLike[str], max_bytes: int, *, what: str = "",
              seconds: float = READ_SECONDS) -> str:
    """:func:`read_bytes`, decoded as UTF-8 (an error names the first bad byte)."""
    what = what or os.fspath(path)
    data = read_bytes(path, max_bytes, what=what, seconds=seconds)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise _fail(what, f"not UTF-8 text: {e.reason} at byte {e.start}") from None


def check_depth(text: str | bytes, max_depth: int = MAX_DEPTH, *, what: str = "") -> None:
    """Raise :class:`BoundedInputError` if the JSON ``text`` nests objects and arrays deeper than ``max_depth``.

    Brackets inside strings do not count. Linear in the length, no recursion; malformed text is left to
    the parser."""
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else bytes(text)
    if raw.count(b"[") + raw.count(b"{") <= max_depth:
        return
    bare = _STRING.sub(b"", raw)
    depth = np.cumsum(_DEPTH_STEP[np.frombuffer(bare, dtype=np.uint8)], dtype=np.int64)
    if depth.size and int(depth.max()) > max_depth:
        raise _fail(what, f"JSON nested too deeply (more than {max_depth} levels)")


def _bounded_int(max_digits: int, what: str) -> Any:
    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise _fail(what, f"a JSON integer of {len(digits.lstrip('-')):,} digits (at most {max_digits})")
        return int(digits)

    return parse_int


def iter_json_lines(chunks: Iterable[bytes], max_line: int, where: Callable[[int], str],
                    max_lines: int | None = None) -> Iterator[tuple[int, Any]]:
    """The JSON value of every line that is not blank of a JSON-lines text given in chunks: (line number from 1,
    value). Each line at most ``max_line`` bytes, UTF-8, within :func:`loads`' bounds, and at most ``max_lines``
    lines (blank ones counted) when given; otherwise a :class:`BoundedInputError` starting with ``where(k)`` for
    line k (``where(0)`` for the whole text)."""
    for k, line in enumerate(iter_lines(chunks, max_line), 1):
        if max_lines is not None and k > max_lines:
            raise BoundedInputError(f"{where(0)}: more than {max_lines:,} lines")
        if len(line) > max_line:
            raise BoundedInputError(f"{where(k)}: longer than {max_line:,} bytes")
        if not line.strip():
            continue
        try:
            value = loads(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise BoundedInputError(f"{where(k)}: not UTF-8 text ({e.reason} at byte {e.start})") from None
        except BoundedInputError as e:
            raise BoundedInputError(f"{where(k)}: {e}") from None
        yield k, value


def loads(text: str | bytes, *, what: str = "", max_bytes: int | None = None, max_depth: int = MAX_DEPTH,
          max_int_digits: int = MAX_INT_DIGITS) -> Any:
    """``json.loads`` within bounds: size (when ``max_bytes`` is given), depth, digits of an integer.

    Every failure, invalid JSON included, is a :class:`BoundedInputError` naming ``what``."""
    if max_bytes is not None and len(text) > max_bytes:
        raise _fail(what, f"{len(text):,} bytes, more than the {max_bytes:,} allowed")
    check_depth(text, max_depth, what=what)
    try:
        return json.loads(text, parse_int=_bounded_int(max_int_digits, what))
    except BoundedInputError:
        raise
    except json.JSONDecodeError as e:
        raise _fail(what, f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}") from None
    except UnicodeDecodeError as e:
        raise _fail(what, f"not UTF-8 text: {e.reason} at byte {e.start}") from None
    except (ValueError, RecursionError) as e:
        raise _fail(what, f"not valid JSON: {' '.join(str(e).split())[:120]}") from None


def read_json(path: str | os.PathLike[str], max_bytes: int, *, what: str = "", max_depth: int = MAX_DEPTH,
              seconds: float = READ_SECONDS) -> Any:
    """The JSON value in the file at ``path``, read with :func:`read_text` and parsed with :func:`loads`."""
    what = what or os.fspath(path)
    return loads(read_text(path, max_bytes, what=what, seconds=seconds), what=what, max_depth=max_depth)


def shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters, for an error message about an input (safe on any value: one
    nested too deeply for ``repr`` or an integer too long to print is shown by its type)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deeply, or an int too long to print
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
