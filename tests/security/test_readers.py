"""Every reader of untrusted files is bounded (issue 30, item 6): records, deal files, arena blocks, configs, bot
manifests, ``compose.json``, golden files, the ``play`` options, bot-protocol lines on stdin and checkpoints.

Each hostile input (an endless device, a FIFO nobody writes or one written slowly forever, a 20 GB sparse file,
JSON nested 100,000 deep, a 5,000-digit integer, a checkpoint whose config asks for a huge network, a zip bomb,
a billion-laughs YAML, a gzip bomb) is refused with the module's own error class and one line that names the
input, within 2 s of the reader's own time and with well under 200 MB of Python allocations (tracemalloc).
Then the same inputs through the command line (``experiments/checks/probe_readers.py``, one subprocess each): exit
status 2, one ``error:`` line on stderr, no traceback, a peak under 200 MB (the figure of issue 30: no probe imports
torch), and no more than a few seconds beyond what a command's start-up costs. The time bounds are generous: they
prove "does not hang", not speed (``experiments/checks/probe_readers.py`` measures the 2 s figure on a quiet
machine)."""

import gzip
import threading
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path

import pytest

from experiments.checks import probe_readers  # the probes as commands, measured
from tarocchi_rl import bounded
from tarocchi_rl.arena import MAX_DEAL_LINE, MAX_DEALS_FILE_BYTES, MAX_DEALS_FILE_LINES, read_deals_file
from tarocchi_rl.arena.blocks import MAX_LINE as MAX_BLOCK_LINE
from tarocchi_rl.arena.blocks import BlockFile
from tarocchi_rl.bot import MAX_LINE, BotServer, read_lines
from tarocchi_rl.play import MAX_OPTION_CHARS, parse_options
from tarocchi_rl.policies.onnx_policy import OnnxPolicyError, read_manifest
from tarocchi_rl.records import MAX_RECORD_BYTES, RecordError, load
from tarocchi_rl.rl.config import MAX_CONFIG_BYTES, MAX_YAML_DEPTH, ConfigError, load_config

SECONDS = 2.0  # a reader's own time on any probe
PYTHON_MB = 200  # a reader's Python allocations on any probe (tracemalloc peak)
STARTUP_MARGIN_S = 10.0  # a command's probe may take this much longer than the same command's start-up...
STARTUP_FACTOR = 3.0  # ...measured once, times this: a busy machine slows a whole process start by a factor (a
# probe timed beside other work took 18.7 s against a start-up of 6.4 s timed alone); a reader that read its
# input whole (20 GiB sparse, /dev/zero) or waited on a stream would still take minutes


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text and len(text) < 400, text
    return text


def refused(call, error, match: str) -> str:
    """``call()`` raises ``error`` with a one-line message matching ``match``, in under :data:`SECONDS` and with
    under :data:`PYTHON_MB` of Python allocations (a second call, traced: tracemalloc slows what it traces)."""
    start = time.monotonic()
    with pytest.raises(error, match=match) as e:
        call()
    seconds = time.monotonic() - start
    tracemalloc.start()
    try:
        with pytest.raises(error, match=match):
            call()
        peak = tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()
    assert seconds < SECONDS, f"{seconds:.2f} s"
    assert peak < PYTHON_MB, f"{peak:.0f} MB"
    return one_line(e)


@contextmanager
def trickling_fifo(d: Path):
    """A FIFO in ``d`` written one byte every 50 ms, forever (until the block ends)."""
    fifo = d / "fifo"
    fifo.parent.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    writer = threading.Thread(target=probe_readers.trickle, args=(probe_readers._fifo(d), stop), daemon=True)
    writer.start()
    try:
        yield fifo
    finally:
        stop.set()
        writer.join(5)


# -- records (tarocchi-rl replay) -------------------------------------------------------------------------------
@pytest.mark.parametrize("make, message", [
    (lambda d: "/dev/zero", f"more than the {MAX_RECORD_BYTES:,} bytes allowed"),
    (lambda d: str(probe_readers._fifo(d)), "no end of input within"),
    (lambda d: str(probe_readers._sparse(d / "huge.json", 20 << 30)), "21,474,836,480 bytes, more than"),
    (lambda d: str(probe_readers.deep_record(d)), "JSON nested too deeply"),
    (lambda d: str(probe_readers.long_integer_record(d)), "a JSON integer of 5,000 digits"),
])
def test_a_hostile_record_is_one_record_error(tmp_path, make, message):
    path = make(tmp_path)
    refused(lambda: load(path), RecordError, message)


def test_a_record_fifo_written_slowly_forever_ends(tmp_path):
    with trickling_fifo(tmp_path) as fifo:
        refused(lambda: load(str(fifo)), RecordError, "no end of input")


def test_a_record_given_as_text_is_bounded_too():
    with pytest.raises(RecordError, match="more than the"):
        load("{" + " " * MAX_RECORD_BYTES + "}")
    refused(lambda: load('{"a": ' + "[" * 100_000 + "]" * 100_000 + "}"), RecordError, "nested too deeply")


# -- deal files and arena blocks ---------------------------------------------------------------------------------
def test_deals_from_an_endless_device_or_a_gzip_bomb_are_one_error(tmp_path):
    refused(lambda: read_deals_file("/dev/zero", "mineo"), ValueError, f"/dev/zero:1: longer than {MAX_DEAL_LINE:,}")
    bomb = probe_readers.gzip_bomb_deals(tmp_path, megabytes=4)  # blank lines
    refused(lambda: read_deals_file(bomb, "mineo"), ValueError, f"more than {MAX_DEALS_FILE_LINES:,} lines")
    blanks = b" " * (MAX_DEAL_LINE - 1) + b"\n"  # fewer, longest blank lines: the gunzipped size is the bound
    bomb = probe_readers.gzip_bomb_deals(tmp_path, megabytes=(MAX_DEALS_FILE_BYTES >> 20) + 1, line=blanks)
    assert bomb.stat().st_size < 2 << 20
    refused(lambda: read_deals_file(bomb, "mineo"), ValueError, f"more than {MAX_DEALS_FILE_BYTES:,} bytes once gunzip")
    (tmp_path / "zeros.jsonl.gz").write_bytes(gzip.compress(bytes(8 << 20)))  # one line of 8 MB of NULs
    refused(lambda: read_deals_file(tmp_path / "zeros.jsonl.gz", "mineo"), ValueError, "zeros.jsonl.gz:1: longer than")
    with trickling_fifo(tmp_path / "f") as fifo:
        refused(lambda: read_deals_file(fifo, "mineo"), ValueError, "no end of input")


def test_a_blocks_file_with_an_endless_line_is_one_error(tmp_path):
    blocks = tmp_path / "b.jsonl"
    blocks.write_bytes(b"x" * (MAX_BLOCK_LINE + 10) + b"\n")
    refused(lambda: BlockFile(blocks), ValueError, "line 1: longer than")
    blocks.write_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    with pytest.raises(ValueError, match="line 1: JSON nested too deeply"):
        BlockFile(blocks)


# -- configs -----------------------------------------------------------------------------------------------------
def test_a_billion_laughs_config_is_refused_before_any_expansion(tmp_path):
    (tmp_path / "laughs.yaml").write_text(probe_readers.BILLION_LAUGHS)
    refused(lambda: load_config(tmp_path / "laughs.yaml"), ConfigError, "anchors and aliases .* are not allowed")
    with pytest.raises(ConfigError, match="network.hidden: not a valid YAML value .anchors and aliases"):
        load_config(None, ["network.hidden=&a [64]"])  # a --set value, or a checkpoint's string read as YAML


def test_a_deep_or_endless_config_is_refused(tmp_path):
    deep = "ppo: " + "[" * (MAX_YAML_DEPTH + 1) + "]" * (MAX_YAML_DEPTH + 1) + "\n"
    (tmp_path / "deep.yaml").write_text(deep)
    refused(lambda: load_config(tmp_path / "deep.yaml"), ConfigError, f"nested more than {MAX_YAML_DEPTH} levels")
    refused(lambda: load_config("/dev/zero"), ConfigError, f"more than the {MAX_CONFIG_BYTES:,} bytes allowed")
    with trickling_fifo(tmp_path) as fifo:
        refused(lambda: load_config(fifo), ConfigError, "no end of input")
    assert load_config(None, ["network.hidden=[64, 64]"]).network.hidden == [64, 64]  # plain YAML still reads


# -- bot directories: manifest.json, compose.json, golden.jsonl --------------------------------------------------
def test_a_nested_or_huge_manifest_is_an_onnx_policy_error(tmp_path):
    d = probe_readers.nested_manifest(tmp_path)
    refused(lambda: read_manifest(d), OnnxPolicyError, "manifest.json: JSON nested too deeply")
    probe_readers._sparse(d / "manifest.json", 4 << 30)
    refused(lambda: read_manifest(d), OnnxPolicyError, "4,294,967,296 bytes, more than")


def test_a_2_gb_compose_json_is_refused_from_its_size(tmp_path):
    from tarocchi_rl.agents.compose_bot import load_composed_bot

    d = probe_readers.huge_compose(tmp_path)
    refused(lambda: load_composed_bot(d), OnnxPolicyError, "compose.json: 2,147,483,648 bytes, more than")


def test_a_huge_golden_file_is_an_export_error(tmp_path):
    from tarocchi_rl.rl.export import MAX_GOLDEN_BYTES, ExportError, read_golden

    probe_readers._sparse(tmp_path / "golden.jsonl", MAX_GOLDEN_BYTES + 1)
    refused(lambda: read_golden(tmp_path / "golden.jsonl"), ExportError, "more than the")
    (tmp_path / "golden.jsonl").write_text('{"obs": [1]}\n' + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(ExportError, match="golden.jsonl line 2: JSON nested too deeply"):
        read_golden(tmp_path / "golden.jsonl")


# -- checkpoints -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("hidden, message", [
    ([4096] * 3, "a network of 37,621,892 parameters for mineo, more than the"),
    ([65536] * 64, "a network of 270,652,014,724 parameters for mineo, more than the"),
    ([512, 512], r"the weights do not fit its network \[512, 512\]: trunk.0.weight has the shape \[32, 858\], the "
                 r"network needs \[512, 858\]"),
])
def test_a_checkpoint_asking_for_another_network_fails_before_any_is_built(tmp_path, monkeypatch, hidden, message):
    from tarocchi_rl.rl import network

    path = probe_readers.wide_checkpoint(tmp_path, hidden)
    assert path.stat().st_size < 200_000

    def no_network(*args, **kwargs):
        raise AssertionError("a network was built before the checkpoint's shapes were checked")

    monkeypatch.setattr(network, "PolicyValueNet", no_network)
    refused(lambda: network.load_network(path), network.CheckpointError, message)


def test_a_zip_bomb_checkpoint_is_refused_before_torch_inflates_it(tmp_path):
    from tarocchi_rl.rl.checkpoint import CheckpointError, load_checkpoint

    path = probe_readers.zip_bomb_checkpoint(tmp_path, inflated=64 << 20)
    assert path.stat().st_size < 1 << 20
    refused(lambda: load_checkpoint(path), CheckpointError, "its zip entries expand to 67,1")


def test_a_huge_checkpoint_is_refused_from_its_size(tmp_path):
    from tarocchi_rl.rl.checkpoint import MAX_CHECKPOINT_BYTES, CheckpointError, load_checkpoint

    probe_readers._sparse(tmp_path / "big.pt", MAX_CHECKPOINT_BYTES + 1)
    refused(lambda: load_checkpoint(tmp_path / "big.pt"), CheckpointError, "more than the")


def test_the_shapes_checked_are_the_networks_own():
    from tarocchi_rl.rl.config import network_parameters
    from tarocchi_rl.rl.network import PolicyValueNet, state_shapes
    from tarocchi_rl.variants import get_variant

    for variant, hidden in (("mineo", (7,)), ("french4", (9, 5, 3))):
        spec = get_variant(variant)
        net = PolicyValueNet(spec.obs_dim, spec.n_actions, hidden)
        assert {k: tuple(v.shape) for k, v in net.state_dict().items()} == state_shapes(spec.obs_dim, spec.n_actions,
                                                                                       hidden)
        assert network_parameters(spec.obs_dim, spec.n_actions, list(hidden)) == sum(
            p.numel() for p in net.parameters())


# -- bot-protocol lines and play options -------------------------------------------------------------------------
def test_bot_lines_are_read_in_bounded_chunks_and_a_long_one_gets_an_error_answer():
    import io

    from tarocchi_rl.agents.specs import make_agent

    stream = io.BytesIO(b"x" * (30 * MAX_LINE) + b'\n{"type": "quit", "id": 7}\n')
    tracemalloc.start()
    lines = list(read_lines(stream))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(lines) == 2 and len(lines[0]) == MAX_LINE + 1
    assert peak < 5 * MAX_LINE  # a few copies of one line's worth, never the 30 MB line
    server = BotServer("random", make_agent)
    assert server.handle(lines[0]) == {"type": "error", "error": f"line longer than {MAX_LINE} bytes"}
    assert server.handle(lines[1]) == {"type": "bye", "id": 7}
    assert "nested too deeply" in server.handle("[" * 100_000)["error"]
    assert "a JSON integer of 5,000 digits" in server.handle('{"type": "hello", "id": ' + "9" * 5000 + "}")["error"]


def test_play_options_are_parsed_within_bounds():
    assert parse_options(["a=true", "b=5", "c=word"]) == {"a": True, "b": 5, "c": "word"}
    deep = "[" * 200 + "]" * 200
    assert parse_options([f"x={deep}"]) == {"x": deep}  # not JSON within bounds: the string, refused by make
    with pytest.raises(ValueError, match=f"longer than {MAX_OPTION_CHARS} characters"):
        parse_options(["x=" + "9" * 5000])


def test_iter_lines_keeps_lines_whole_across_chunks_and_cuts_long_ones():
    data = b"ab\n" + b"x" * 20 + b"\ncd\n\nlast"
    for size in (1, 2, 3, 7, 100):
        chunks = [data[i:i + size] for i in range(0, len(data), size)]
        assert list(bounded.iter_lines(chunks, 5)) == [b"ab\n", b"xxxxxx", b"cd\n", b"\n", b"last"]
    assert list(bounded.iter_lines([b"abcd\n", b"abcde\n"], 5)) == [b"abcd\n", b"abcde\n"]


# -- the command line: one subprocess per probe -------------------------------------------------------------------
@pytest.fixture(scope="module")
def startup(tmp_path_factory):
    """The start-up cost of a command that fails at once: seconds."""
    (name, probe), = probe_readers.STARTUP.items()
    r = probe_readers.run_named(name, probe, tmp_path_factory.mktemp("startup"))
    assert r.code == 2
    return r.seconds


@pytest.mark.parametrize("name", list(probe_readers.PROBES))
def test_every_probe_through_the_command_line(name, startup, tmp_path):
    probe = probe_readers.PROBES[name]
    r = probe_readers.run_named(name, probe, tmp_path)
    seconds = startup
    assert r.code == probe.expect_code, (r.code, r.stderr[-500:])
    assert "Traceback" not in r.stderr
    if probe.expect_code == 2:
        assert r.stderr.startswith("error: ") and r.stderr.count("\n") == 1, r.stderr[-500:]
    else:  # the bot: an error answer for the long line, then it serves on
        answers = r.stdout.splitlines()
        assert [a.split('"type":"')[1].split('"')[0] for a in answers] == ["error", "hello", "bye"], answers
    assert r.seconds < STARTUP_FACTOR * seconds + STARTUP_MARGIN_S, (r.seconds, seconds)
    assert r.peak_mb < probe_readers.FIGURE_MB, r.peak_mb
