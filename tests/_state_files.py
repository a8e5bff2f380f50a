"""Shared checks of the schedulers' state files and restore routes (both schedulers' tests use them)."""

from __future__ import annotations

import copy
import io
import os
import pickle
import struct
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from freshcore import _statefile


def same(x, y) -> bool:
    """Equality of to_dict values: nested dicts and lists, arrays bit for bit (NaN equal to NaN)."""
    if isinstance(x, dict) or isinstance(y, dict):
        return isinstance(x, dict) and isinstance(y, dict) and x.keys() == y.keys() and all(same(x[k], y[k]) for k in x)
    if isinstance(x, list) or isinstance(y, list):
        return isinstance(x, list) and isinstance(y, list) and len(x) == len(y) and all(map(same, x, y))
    if isinstance(x, np.ndarray) or isinstance(y, np.ndarray):
        a, b = np.asarray(x), np.asarray(y)
        return a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    return type(x) is type(y) and x == y


def state_equal(a: Any, b: Any) -> bool:
    """Whether two schedulers (either class) hold the same state: their ``to_dict()`` bit for bit."""
    return same(a.to_dict(), b.to_dict())


#: The routes by which a scheduler's state is saved and restored.
HOWS = ["save", "pickle", "deepcopy", "copy", "dict"]


def restore(s: Any, how: str, tmp_path: Path) -> Any:
    """A copy of scheduler ``s`` (either class) through one of the :data:`HOWS`."""
    cls = type(s)
    if how == "save":
        path = tmp_path / "scheduler.state"
        s.save(path)
        return cls.load(path)
    if how == "pickle":
        return pickle.loads(pickle.dumps(s))
    if how == "deepcopy":
        return copy.deepcopy(s)
    if how == "copy":
        return copy.copy(s)
    return cls.from_dict(s.to_dict())


def truncated_files_raise(s, path, what="scheduler"):
    """Every prefix of the file ``s`` saved at ``path`` fails to load with a ValueError."""
    blob = path.read_bytes()
    for n in (0, 10, len(blob) // 3, len(blob) // 2, len(blob) - 30, len(blob) - 1):
        path.write_bytes(blob[:n])
        with pytest.raises(ValueError, match=f"truncated or corrupted|not a freshcore {what} file"):
            type(s).load(path)


def member_data_bytes(blob: bytes) -> np.ndarray:
    """Mask of the bytes of a zip archive that hold its members' data (not headers or directory)."""
    mask = np.zeros(len(blob), dtype=bool)
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        for info in z.infolist():
            off = info.header_offset
            n_name, n_extra = struct.unpack("<HH", blob[off + 26: off + 30])
            start = off + 30 + n_name + n_extra
            mask[start: start + info.compress_size] = True
    return mask


def bit_flips_never_give_another_state(s, path, equal, n_flips=300):
    """Flipped bits in the file ``s`` saved at ``path`` raise ValueError or load ``s``.

    A flip in any member's data is caught (zip CRC-32, then the SHA-256 of the payload); a flip
    elsewhere is caught or hits a byte that carries no state (e.g. a zip timestamp), and then the
    loaded state is the saved one.
    """
    blob = path.read_bytes()
    data = member_data_bytes(blob)
    assert data.sum() > len(blob) / 2
    rng = np.random.default_rng(0)
    positions = np.concatenate([rng.choice(len(blob), size=n_flips, replace=False), [0, len(blob) - 1]])
    caught = 0
    for pos in positions:
        flipped = bytearray(blob)
        flipped[pos] ^= 1 << int(rng.integers(8))
        path.write_bytes(bytes(flipped))
        try:
            other = type(s).load(path)
        except ValueError:
            caught += 1
            continue
        assert not data[pos], f"bit flip in member data at byte {pos} was not caught"
        assert equal(other, s), f"bit flip at byte {pos} loaded another state"
    assert caught >= data[positions].sum()


def rewrite(path, **changes):
    with np.load(path, allow_pickle=False) as z:
        data = {k: z[k] for k in z.files}
    data.update({k: np.asarray(v) for k, v in changes.items()})
    data["sha256"] = np.asarray(_statefile.digest(data))
    with open(path, "wb") as f:
        np.savez(f, **data)


def failed_save_leaves_previous_file(s, path, monkeypatch, where):
    """A save of ``s`` failing at ``where`` leaves the file it saved at ``path`` as it was, and no other file
   ."""
    before = path.read_bytes()
    s.run(50)

    def boom(*a, **k):
        if where == "savez":  # fail after part of the archive is written
            f = a[0]
            f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    target = {"savez": (np, "savez"), "fsync": (os, "fsync"), "replace": (os, "replace")}[where]
    monkeypatch.setattr(*target, boom)
    with pytest.raises(OSError, match="disk full"):
        s.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(path.parent) == [path.name]
    assert type(s).load(path).time < s.time


def first_memory_error(make: Any, run: Any, allocations: range) -> tuple[Any, str]:
    """The object ``make()`` and the message of the MemoryError ``run(it)`` raises when the k-th allocation from
    then on fails, for the first k of ``allocations`` that raises one (a shrink that fails is not an error)."""
    import pytest

    from freshcore import _schedule

    for k in allocations:
        s = make()
        _schedule._fail_allocation(k)
        try:
            run(s)
        except MemoryError as e:
            return s, str(e)
        finally:
            _schedule._fail_allocation(0)
    pytest.fail("no allocation of the run was needed")



def as_format_12(d: dict) -> dict:
    """A to_dict() dict with its slope buckets as format 12 had them (four an octave for the lines bounding V and
    ln V; the unbounded and parked codes after 3600), to label it an older format: a line whose slope is not one of
    format 12's goes to the next larger one, keyed so that its bound at the dict's time is the same (larger after:
    still a bound; a little earlier for the rounding).  Loading it maps the codes back (format 13's upgrade) onto
    those slopes, so the lines and keys differ from the saved ones, the decisions (exact) do not."""
    from freshcore import _schedule

    per = _schedule.SLOPES_PER_OCTAVE
    n_slopes = _schedule.N_OCTAVES * per
    d = dict(d)
    code = np.asarray(d["bucket"]).astype(np.int64)
    key = np.array(d["key"], dtype=np.float64, copy=True)
    t = float(d["time"])
    out = code.copy()
    for base, old_base in ((0, 0), (n_slopes, 600)):  # lines bounding V, then ln V
        sel = (code > base) & (code <= base + n_slopes)
        i = code[sel] - base - 1
        o, q = i // per, i % per
        qo = (q * 4) // per  # the format-12 slope at or above (1/2 + (q + 1)/(2 per)) 2**e
        out[sel] = old_base + 1 + 4 * o + qo
        ratio = (0.5 + (q + 1) / (2.0 * per)) / (0.5 + (qo + 1) / 8.0)  # new slope / format 12's (<= 1)
        k = key[sel]
        moved = ratio < 1.0
        shifted = t - ratio * (t - k)
        k[moved] = shifted[moved] - 1e-12 * (1.0 + abs(t) + np.abs(k[moved]))
        key[sel] = k
    sel = (code > 2 * n_slopes) & (code < _schedule.UNBOUNDED_CODE)
    out[sel] = code[sel] - 2 * n_slopes + 1200
    for new, old in ((_schedule.UNBOUNDED_CODE, 3601), (_schedule.PARK_CODE, 3602), (_schedule.FAR_CODE, 3603)):
        out[code == new] = old
    d["bucket"] = out.astype(np.asarray(d["bucket"]).dtype)
    d["key"] = key
    settle = int(d.get("park_settle", 0))
    if settle > 0:  # the settle's next bucket: the format-12 one at or below it (buckets below it are done)
        if settle <= 2 * n_slopes:
            base, old_base = (0, 0) if settle <= n_slopes else (n_slopes, 600)
            i = settle - base - 1
            d["park_settle"] = old_base + 1 + 4 * (i // per) + (i % per) * 4 // per
        else:
            d["park_settle"] = settle - 2 * n_slopes + 1200
    return d


def state_equal_but_lines(a: Any, b: Any) -> bool:
    """state_equal but for the slope buckets and keys (a state labelled an older format: as_format_12)."""
    x, y = a.to_dict(), b.to_dict()
    return all(same(x[k], y[k]) for k in x if k not in ("bucket", "key", "park_settle")) and x.keys() == y.keys()
