"""tarocchi_rl.bounded: the one reader of untrusted files, streams and JSON text stops at every bound, quickly,
with one error that names the input."""

import os
import threading
import time

import pytest

from tarocchi_rl.bounded import MAX_DEPTH, MAX_INT_DIGITS, BoundedInputError, check_depth, loads, read_bytes, read_json


def test_a_small_file_is_read_whole(tmp_path):
    (tmp_path / "a.json").write_text('{"x": [1, 2, {"y": "[[[["}]}')
    assert read_json(tmp_path / "a.json", 100) == {"x": [1, 2, {"y": "[[[["}]}


def test_a_large_regular_file_is_refused_from_its_size_before_reading(tmp_path):
    big = tmp_path / "big"
    with open(big, "wb") as f:
        f.truncate(20 << 30)  # sparse: 20 GB that take no disk
    start = time.monotonic()
    with pytest.raises(BoundedInputError, match=r"big: 21,474,836,480 bytes, more than the 1,000 allowed"):
        read_bytes(big, 1000)
    assert time.monotonic() - start < 1


def test_an_endless_device_stops_at_the_cap():
    with pytest.raises(BoundedInputError, match="more than the 65,536 bytes allowed"):
        read_bytes("/dev/zero", 1 << 16)


def test_a_fifo_nobody_writes_and_one_written_slowly_end_within_the_deadline(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(BoundedInputError, match="no end of input within 0.3 s"):
        read_bytes(fifo, 1000, seconds=0.3)
    assert time.monotonic() - start < 2

    stop = threading.Event()

    def trickle():
        with open(fifo, "wb", buffering=0) as f:
            while not stop.wait(0.05):
                try:
                    f.write(b"x")
                except BrokenPipeError:
                    return

    writer = threading.Thread(target=trickle, daemon=True)
    writer.start()
    try:
        with pytest.raises(BoundedInputError, match="no end of input"):
            read_bytes(fifo, 10_000, seconds=0.3)
    finally:
        stop.set()
        writer.join(2)


def test_deep_nesting_and_long_integers_are_errors_not_crashes():
    with pytest.raises(BoundedInputError, match=f"nested too deeply \\(more than {MAX_DEPTH} levels"):
        loads("[" * 100_000 + "]" * 100_000, what="body")
    with pytest.raises(BoundedInputError, match=f"body: a JSON integer of 5,000 digits \\(at most {MAX_INT_DIGITS}\\)"):
        loads('{"seed": ' + "9" * 5000 + "}", what="body")
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    check_depth('["' + "[" * 1000 + '"]')  # brackets inside a string do not count
    check_depth('["\\"' + "[" * 1000 + '"]')  # nor after an escaped quote


@pytest.mark.parametrize("text, message", [
    ("{", "not valid JSON"), (b"\xff\xfe", "not"), ("", "not valid JSON"), ('{"a": 1} x', "not valid JSON"),
])
def test_invalid_json_is_one_error_naming_the_input(text, message):
    with pytest.raises(BoundedInputError, match=f"^thing: {message}"):
        loads(text, what="thing")


def test_unreadable_paths_are_errors(tmp_path):
    with pytest.raises(BoundedInputError, match="^cannot read .*missing: No such file"):
        read_bytes(tmp_path / "missing", 10)
    with pytest.raises(BoundedInputError, match="^cannot read .*: Is a directory"):
        read_bytes(tmp_path, 10)
    with pytest.raises(BoundedInputError, match="^cannot read a"):
        read_bytes("a\0b", 10)
