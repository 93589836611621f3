"""Bounded reading of untrusted input: files, streams and JSON text from elsewhere.

Everything a stranger can hand the toolkit (records, deal files, configs, bot manifests, ``compose.json``,
bot-protocol lines, web bodies) is read through here, so that no input can make a reader run for long, use
much memory, or fail with a traceback:

| bound                | default              | what it stops                                                       |
|----------------------|----------------------|---------------------------------------------------------------------|
| bytes of one input   | the caller's cap     | a file or stream that never ends (``/dev/zero``, a FIFO) or is huge |
| seconds of one read  | :data:`READ_SECONDS` | a pipe or FIFO that never delivers (regular files are not timed)    |
| JSON nesting depth   | :data:`MAX_DEPTH`    | ``[[[[...]]]]`` (Python's parser would raise ``RecursionError``)    |
| digits of an integer | :data:`MAX_INT_DIGITS` | a 5,000-digit integer (slow to convert, then a ``ValueError``)    |

The size is checked before anything is read where the file says its size (``fstat``), and a stream is read
in chunks of at most :data:`CHUNK` bytes, never past the cap plus one byte. Depth is measured on the text with
its strings removed (one regular expression and a NumPy cumulative sum: linear, no recursion) before the text
is parsed. Every failure is a :class:`BoundedInputError` whose message names the input (``what``) and the
bound it broke, in one line.
"""

from __future__ import annotations

import json
import os
import re
import select
import stat
import time
from typing import Any

import numpy as np

__all__ = ["BoundedInputError", "CHUNK", "MAX_DEPTH", "MAX_INT_DIGITS", "READ_SECONDS", "check_depth",
           "loads", "read_bytes", "read_json", "read_text"]

MAX_DEPTH = 64  # nesting of objects and arrays; the deepest real input (a record's steps) is 4
MAX_INT_DIGITS = 40  # digits of one JSON integer; seeds are below 2**64 (20 digits)
READ_SECONDS = 2.0  # longest wait for a stream (pipe, FIFO, device) to deliver the rest of an input
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
    ``seconds`` without its end (an error). Opening a FIFO that no process writes waits for a writer; the
    open is non-blocking, so it does not hang either."""
    what = what or os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise _fail(what, f"cannot read it: {e.strerror or e}") from None
    except (ValueError, TypeError) as e:  # an embedded NUL, a path of the wrong type
        raise _fail(what, f"cannot read it: {e}") from None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise _fail(what, "is a directory, not a file")
        if stat.S_ISREG(info.st_mode):
            if info.st_size > max_bytes:
                raise _fail(what, f"{info.st_size:,} bytes, more than the {max_bytes:,} allowed")
            os.set_blocking(fd, True)
            data = _read_regular(fd, max_bytes)
        else:
            data = _read_stream(fd, max_bytes, seconds, what)
    except OSError as e:
        raise _fail(what, f"cannot read it: {e.strerror or e}") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise _fail(what, f"more than the {max_bytes:,} bytes allowed")
    return data


def _read_regular(fd: int, max_bytes: int) -> bytes:
    parts, size = [], 0
    while size <= max_bytes:  # a file that grows while it is read stops at the cap plus one byte
        chunk = os.read(fd, min(CHUNK, max_bytes + 1 - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def _read_stream(fd: int, max_bytes: int, seconds: float, what: str) -> bytes:
    parts, size = [], 0
    deadline = time.monotonic() + seconds
    while size <= max_bytes:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise _fail(what, f"no end of input within {seconds:g} s (a pipe or device that does not end?)")
        try:
            chunk = os.read(fd, min(CHUNK, max_bytes + 1 - size))
        except BlockingIOError:
            continue
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


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
        raise _fail(what, f"JSON nested more than {max_depth} levels deep")


def _bounded_int(max_digits: int, what: str) -> Any:
    def parse_int(digits: str) -> int:
        if len(digits.lstrip("-")) > max_digits:
            raise _fail(what, f"a JSON integer of {len(digits.lstrip('-')):,} digits (at most {max_digits})")
        return int(digits)

    return parse_int


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
