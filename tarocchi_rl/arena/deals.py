"""Deals of the duplicate arena: the seatings of a pair, random deals, and frozen deals files (JSON lines, gzip when
the name ends in ``.gz``; read as untrusted input, within the bounds below)."""

import gzip
import io
import json
import os
import zlib
from collections.abc import Iterable, Iterator
from itertools import combinations
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from .. import bounded
from ..batch import BatchEnv
from ..bounded import shown
from ..game import make
from ..variants import VariantSpec, get_variant

MAX_DEALS = 100_000

MAX_DEAL_LINE = 1 << 14  # bytes of one line of a deals file (a deal with its options is about 600 bytes)
MAX_DEALS_FILE_BYTES = 1 << 27  # bytes of a deals file, gunzipped: MAX_DEALS deals twice over
MAX_DEALS_FILE_LINES = 2 * MAX_DEALS  # lines of a deals file, blank ones included
_GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib's code for the gzip format


def seatings(n_players: int) -> NDArray[np.int8]:
    """Seat maps for a pair (A=0, B=1): int8[G, N], who sits where in each duplicate game.

    Each agent alone against copies of the other in every seat (2N maps); with 4 players also every 2+2
    split (6 maps: the pairwise rotations, which include the fixed partnerships 0+2 / 1+3 of piedmont4).
    """
    maps = []
    for s in range(n_players):
        for alone, rest in ((0, 1), (1, 0)):
            m = [rest] * n_players
            m[s] = alone
            maps.append(m)
    if n_players == 4:
        for pair in combinations(range(4), 2):
            maps.append([0 if k in pair else 1 for k in range(4)])
    return np.array(maps, np.int8)


def random_decks(variant: str | VariantSpec, n: int, seed: int, **options: Any) -> NDArray[np.int16]:
    """n deals (int16[n, C] dense card ids in deal order) from the core's shuffle (``variant``: a name or its
    VariantSpec)."""
    env = BatchEnv(variant, n, seed=seed, **options)
    return env.state.deck[:, : env.spec.deck.n_cards].copy()


def _open_text(path: str | os.PathLike[str], mode: str) -> IO[str]:
    """A deals file as text: gzip-compressed when its name ends in ``.gz`` (the committed benchmark sets)."""
    if os.fspath(path).endswith(".gz"):
        raw = gzip.GzipFile(path, mode + "b", mtime=0)  # mtime 0: the same deals give the same bytes
        return io.TextIOWrapper(raw, encoding="utf-8")
    return open(path, mode, encoding="utf-8")


def write_deals_file(path: str | os.PathLike[str], variant: str, n: int, seed: int, **options: Any) -> None:
    """A frozen evaluation set: one JSON object per line, {"variant", "options", "deal": {hands, stock}}
    (gzip-compressed when ``path`` ends in ``.gz``).

    A path that cannot be written (a directory, a missing parent, no permission) is a ValueError naming it,
    raised before any deal is made."""
    spec = get_variant(variant)
    opts = spec.resolve_options(options)
    names = spec.deck.names
    if os.path.isdir(path):
        raise ValueError(f"deals file {os.fspath(path)!s}: is a directory")
    try:
        f = _open_text(path, "w")
    except OSError as e:
        raise ValueError(f"cannot write deals file {os.fspath(path)!s}: {e.strerror or e}") from None
    with f:
        for deck in random_decks(variant, n, seed, **opts):
            hands: list[list[str]] = []
            k = 0
            for size in spec.hand_sizes:
                hands.append([names[c] for c in deck[k : k + size]])
                k += size
            stock = [names[c] for c in deck[k : k + spec.stock_size]]
            f.write(json.dumps({"variant": variant, "options": opts, "deal": {"hands": hands, "stock": stock}}) + "\n")




def read_deals_file(path: str | os.PathLike[str], variant: str) -> NDArray[np.int16]:
    """Decks (int16[n, C]) from a deals file; every line is checked (variant, sizes, cards;
    the options a line records are not needed to deal and are not read).

    Anything wrong is a ValueError naming the file (and the line): a missing or unreadable file, a directory,
    text that is not UTF-8, a line that is not a JSON object of the format :func:`write_deals_file` writes, a
    deal of another variant, a wrong hand size or an unknown or repeated card, no deal at all. The file is read
    line by line within bounds: :data:`MAX_DEALS_FILE_BYTES` (gunzipped), :data:`MAX_DEALS_FILE_LINES` lines of
    at most :data:`MAX_DEAL_LINE` bytes, :data:`MAX_DEALS` deals, and a stream (a pipe, a FIFO) that delivers within
    :data:`tarocchi_rl.bounded.READ_SECONDS`."""
    game = make(variant)
    where = os.fspath(path)
    if os.path.isdir(path):
        raise ValueError(f"deals file {where}: is a directory")
    decks: list[NDArray[np.int16]] = []
    try:
        def where_line(k: int) -> str:  # FILE:LINE, the file alone for the whole file
            return f"{where}:{k}" if k else f"deals file {where}"

        for k, obj in bounded.iter_json_lines(_deal_chunks(path, where), MAX_DEAL_LINE, where_line,
                                              max_lines=MAX_DEALS_FILE_LINES):
            if len(decks) == MAX_DEALS:
                raise ValueError(f"deals file {where}: more than {MAX_DEALS:,} deals")
            decks.append(_read_deal(game, variant, obj, f"{where}:{k}"))
    except bounded.BoundedInputError as e:
        raise ValueError(str(e)) from None
    if not decks:
        raise ValueError(f"{where}: no deals")
    return np.array(decks)


def _deal_chunks(path: str | os.PathLike[str], where: str) -> Iterator[bytes]:
    """The bytes of a deals file, gunzipped when its name ends in ``.gz``, within :data:`MAX_DEALS_FILE_BYTES`."""
    chunks = bounded.iter_chunks(path, MAX_DEALS_FILE_BYTES, what=f"deals file {where}")
    if where.endswith(".gz"):
        chunks = _gunzip(chunks, MAX_DEALS_FILE_BYTES, f"deals file {where}")
    return iter(chunks)


def _gunzip(chunks: Iterable[bytes], max_bytes: int, what: str) -> Iterator[bytes]:
    """The bytes of gzip data (one member or several) given in chunks, at most ``max_bytes`` of them, never more
    than :data:`tarocchi_rl.bounded.CHUNK` at a time; a ValueError naming ``what`` when there are more, or the
    data is damaged or cut short."""
    d, size = zlib.decompressobj(_GZIP_WBITS), 0
    try:
        for chunk in chunks:
            data = chunk
            while data:
                if d.eof:  # the next member
                    d = zlib.decompressobj(_GZIP_WBITS)
                piece = d.decompress(data, bounded.CHUNK)
                data = d.unused_data if d.eof else d.unconsumed_tail
                size += len(piece)
                if size > max_bytes:
                    raise ValueError(f"{what}: more than {max_bytes:,} bytes once gunzipped")
                yield piece
        while not d.eof and (piece := d.decompress(b"", bounded.CHUNK)):  # output zlib still holds
            size += len(piece)
            if size > max_bytes:
                raise ValueError(f"{what}: more than {max_bytes:,} bytes once gunzipped")
            yield piece
    except zlib.error as e:
        raise ValueError(f"{what}: damaged gzip data ({' '.join(str(e).split())})") from None
    if not d.eof:
        raise ValueError(f"{what}: damaged gzip data (cut short)")


def _read_deal(game: Any, variant: str, obj: Any, where: str) -> NDArray[np.int16]:
    """One line's JSON value of a deals file as a deck (ValueError starting with ``FILE:LINE:``)."""
    if not isinstance(obj, dict):
        raise ValueError(f"{where}: a deal must be a JSON object with variant and deal, got {shown(obj)}")
    if obj.get("variant") != variant:
        raise ValueError(f"{where}: deal of variant {shown(obj.get('variant'))}, expected {variant!r}")
    deal = obj.get("deal")
    if not isinstance(deal, dict) or "hands" not in deal or "stock" not in deal:
        raise ValueError(f"{where}: deal must be an object with 'hands' and 'stock'")
    try:
        state = game.state_from_deal(deal["hands"], deal["stock"])
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    return state._env.state.deck[0, : game.deck.n_cards].copy()
