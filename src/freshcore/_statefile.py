"""Saved states of the schedulers: their declared entries, the checks, and the atomic, checked file.

:class:`~freshcore.schedule.Scheduler` and :class:`~freshcore.sharding.ShardedScheduler`
each declare the entries of their ``to_dict()`` as a tuple of :class:`Entry`;
:func:`check_entries` checks a dict against such a declaration (presence, type,
shape and range, each failure a ``ValueError`` naming the entry), so neither
class writes those checks by hand.  What ties entries together (a clock that
must add up, pages that must sit in a heap) stays with the class.

A file is an ``.npz`` archive of named arrays, read with ``allow_pickle=False``:
the state, a magic string naming the class that wrote it, the ``format_version``
entry of that class, and the SHA-256 of all of it (:func:`digest`).  Nested
dicts and lists of dicts (a sharded scheduler's shards) are flattened to keys
``outer/0/inner``, and ``None`` values are listed in the entry ``none``.
:func:`write` puts the archive in a temporary file in the destination's
directory, flushes it to disk and renames it over the destination, so a crash
or an error mid-save leaves the previous file intact and never a partial one;
:func:`read` refuses a truncated or corrupted archive, a payload whose digest
does not match, another magic string and another format version, each with a
``ValueError`` that says which.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any, ClassVar, TypeVar

import numpy as np

_T = TypeVar("_T", bound="StateFile")

#: Entry kinds of :class:`Entry`: scalars, and arrays of one entry per page slot.
KINDS = ("int", "float", "bool", "str", "ints", "floats", "flags")


@dataclass(frozen=True)
class Entry:
    """One declared entry of a saved state.

    ``kind``: ``"int"``, ``"float"``, ``"bool"``, ``"str"`` (scalars) or
    ``"ints"``, ``"floats"``, ``"flags"`` (arrays of shape ``(n,)``, ``n`` given
    to :func:`check_entries`).  ``low``/``high`` bound numbers (inclusive unless
    ``open_low``/``open_high``); ``finite`` (floats) refuses inf as well as NaN, which is always
    refused; ``choices`` lists the allowed strings; ``optional`` allows ``None``.
    """

    name: str
    kind: str
    low: float | None = None
    high: float | None = None
    open_low: bool = False
    open_high: bool = False
    finite: bool = True
    choices: tuple[str, ...] | None = None
    optional: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown entry kind {self.kind!r}")


def item(x: Any) -> Any:
    """A Python scalar from a scalar or a 0-d array (npz entries are arrays)."""
    if isinstance(x, np.ndarray):
        if x.ndim != 0:
            raise ValueError(f"expected a scalar entry, got an array of shape {x.shape}")
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    return x


def _range(e: Entry) -> str:
    parts = []
    if e.low is not None:
        parts.append(f"{'>' if e.open_low else '>='} {e.low!r}")
    if e.high is not None:
        parts.append(f"{'<' if e.open_high else '<='} {e.high!r}")
    return " and ".join(parts)


def _in_range(v: Any, e: Entry) -> Any:
    """Boolean (array) of the values within ``e``'s bounds (NaN is out)."""
    ok = np.ones(np.shape(v), dtype=bool)
    if e.low is not None:
        ok &= (v > e.low) if e.open_low else (v >= e.low)
    if e.high is not None:
        ok &= (v < e.high) if e.open_high else (v <= e.high)
    return ok


def check_entries(d: Any, entries: tuple[Entry, ...], caller: str, n: int | None = None) -> dict[str, Any]:
    """The declared entries of ``d``, checked and converted (Python scalars, C-contiguous arrays that are copies).

    Raises
    ------
    TypeError
        If ``d`` is not a mapping.
    ValueError
        If an entry is missing, of the wrong type or shape, or out of range;
        the message names the entry (and, for arrays, the first bad index).
    """
    if not isinstance(d, Mapping):
        raise TypeError(f"The 'd' parameter of {caller} must be a dict. Got {type(d).__name__} instead.")
    missing = [e.name for e in entries if e.name not in d]
    if missing:
        raise ValueError(f"The 'd' parameter of {caller} lacks the entries {missing}.")
    out: dict[str, Any] = {}
    for e in entries:
        out[e.name] = _check_entry(d[e.name], e, caller, n)
    return out


def _check_entry(x: Any, e: Entry, caller: str, n: int | None) -> Any:
    def bad(why: str) -> ValueError:
        return ValueError(f"The {e.name!r} entry of the dict given to {caller} {why}.")

    bounds = _range(e)
    if e.kind in ("ints", "floats", "flags"):
        a = np.asarray(x)
        if a.shape != (n,):
            raise bad(f"must have shape ({n},), got {a.shape}")
        if e.kind == "flags":
            if a.size and (a.dtype.kind not in "biu" or not np.isin(a, (0, 1)).all()):
                raise bad(f"must hold {n} flags (0/1 or bools)")
            return np.array(a, dtype=bool)
        if e.kind == "ints":
            if a.size and a.dtype.kind not in "iu":
                raise bad(f"must be an integer array of shape ({n},)")
            a = np.array(a, dtype=np.int64)
            ok = _in_range(a, e)
        else:
            if a.size and a.dtype.kind not in "iuf":
                raise bad(f"must be a float array of shape ({n},)")
            a = np.array(a, dtype=np.float64)
            if e.finite and not np.isfinite(a).all():
                i = int(np.flatnonzero(~np.isfinite(a))[0])
                raise bad(f"must be finite; {e.name}[{i}] = {a[i].item()!r}")
            if np.isnan(a).any():
                raise bad(f"must not hold NaN; {e.name}[{int(np.flatnonzero(np.isnan(a))[0])}] = nan")
            ok = _in_range(a, e)
        if not ok.all():
            i = int(np.flatnonzero(~ok)[0])
            raise bad(f"must hold {'integers' if e.kind == 'ints' else 'numbers'} {bounds}; "
                      f"{e.name}[{i}] = {a[i].item()!r}")
        return a
    try:
        v = item(x)
    except ValueError as exc:
        raise bad(f"must be a scalar ({exc})") from None
    if v is None:
        if e.optional:
            return None
        raise bad("must not be None")
    if e.kind == "bool":
        if not isinstance(v, bool):
            raise bad(f"must be a bool, got {v!r}")
        return v
    if e.kind == "str":
        if not isinstance(v, str) or (e.choices is not None and v not in e.choices):
            want = "a string" if e.choices is None else "one of " + ", ".join(repr(c) for c in e.choices)
            raise bad(f"must be {want}, got {v!r}")
        return v
    if e.kind == "int":
        if not isinstance(v, int) or isinstance(v, bool) or not _in_range(v, e):
            raise bad(f"must be an integer {bounds}, got {v!r}".replace("integer  ", "integer "))
        return v
    if not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v) or (e.finite and math.isinf(v)):
        raise bad(f"must be a {'finite ' if e.finite else ''}number, got {v!r}")
    if not _in_range(float(v), e):
        raise bad(f"must be {bounds}, got {v!r}")
    return float(v)


# -- the file -----------------------------------------------------------------------------------------------


def digest(arrays: Mapping[str, np.ndarray]) -> str:
    """SHA-256 over every entry but the digest itself: name, dtype, shape and bytes, in key order."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        if key == "sha256":
            continue
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, np.ndarray]:
    """Arrays of a state dict: nested dicts and lists of dicts under ``outer/i/inner`` keys, ``None`` in ``none``."""
    out: dict[str, np.ndarray] = {}
    nones: list[str] = []
    _flatten(d, prefix, out, nones)
    if nones:
        out["none"] = np.array(nones)
    return out


def _flatten(d: Mapping[str, Any], prefix: str, out: dict[str, np.ndarray], nones: list[str]) -> None:
    for key, v in d.items():
        name = prefix + key
        if isinstance(v, Mapping):
            _flatten(v, name + "/", out, nones)
        elif isinstance(v, (list, tuple)) and v and all(isinstance(x, Mapping) for x in v):
            for i, x in enumerate(v):
                _flatten(x, f"{name}/{i}/", out, nones)
        elif v is None:
            nones.append(name)
        else:
            out[name] = np.asarray(v)


def unflatten(arrays: Mapping[str, np.ndarray]) -> dict[str, Any]:
    """Undo :func:`flatten` (an index ``i`` in a key makes a list; lists are dense from 0)."""
    root: dict[str, Any] = {}
    names = dict(arrays)
    none = names.pop("none", None)
    if none is not None:
        for key in np.atleast_1d(none).tolist():
            names[str(key)] = None  # type: ignore[assignment]
    for key, v in names.items():
        parts = key.split("/")
        node = root
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):  # a leaf and a prefix at once: not a flattened state
                raise ValueError(f"entry {key!r} of a state file lies under the entry {part!r}")
            node = child
        node[parts[-1]] = v
    return _lists(root)


def _lists(node: Any) -> Any:
    """Dicts whose keys are 0 .. n-1 become lists (of their converted values)."""
    if not isinstance(node, dict):
        return node
    conv = {k: _lists(v) for k, v in node.items()}
    if conv and all(k.isdigit() for k in conv) and sorted(int(k) for k in conv) == list(range(len(conv))):
        return [conv[str(i)] for i in range(len(conv))]
    return conv


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()  # (read once: setting it to read it is not thread-safe)


@contextmanager
def atomic_file(path: str | os.PathLike[str], mode: str = "wb", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file object, open for writing, that becomes ``path`` only when the block ends without an error.

    It is a temporary file beside ``path``: flushed, synced and renamed over ``path`` at the end (and the
    rename synced), removed on an error, so that ``path`` is never left half written.  ``kwargs`` go to
    :func:`open` (text modes: ``newline=""``, ``encoding``...).

    Raises
    ------
    FileNotFoundError, NotADirectoryError, PermissionError, OSError
        As opening ``path`` for writing would, naming ``path`` (never the temporary file).
    """
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    except OSError as exc:  # (the error would name the temporary file, not what the caller asked for)
        raise type(exc)(exc.errno, f"cannot write {path!r}: {exc.strerror}") from None
    try:
        os.chmod(tmp, 0o666 & ~_UMASK)  # (mkstemp makes it 0600: give it the mode a plain open would)
        with os.fdopen(fd, mode, **kwargs) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable
        dfd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dfd)
    except OSError:
        pass
    finally:
        os.close(dfd)


def write(path: str | os.PathLike[str], arrays: Mapping[str, np.ndarray], magic: str) -> None:
    """Write ``arrays`` plus ``magic`` and their digest to ``path`` atomically (:func:`atomic_file`).

    Raises
    ------
    FileNotFoundError, NotADirectoryError, PermissionError, OSError
        As opening ``path`` for writing would, naming ``path`` (never the temporary file).
    """
    arrays = dict(arrays)
    arrays["magic"] = np.array(magic)
    arrays["sha256"] = np.array(digest(arrays))
    with atomic_file(path) as f:
        np.savez(f, **arrays)  # type: ignore[arg-type]  # (numpy's stub types the first keyword)


def read(path: str | os.PathLike[str], magic: str, versions: tuple[int, ...], what: str) -> dict[str, np.ndarray]:
    """The arrays :func:`write` put in ``path`` (without ``magic`` and ``sha256``), checked.

    ``what`` names the kind of file in the messages ("scheduler").

    Raises
    ------
    ValueError
        If the archive is unreadable (truncated, corrupted, or not an archive
        of arrays at all), its magic string is not ``magic``, its
        ``format_version`` is not one of ``versions`` or its payload does not match
        its SHA-256.
    FileNotFoundError, IsADirectoryError, PermissionError
        As ``open`` raises them.
    """
    path = os.fspath(path)
    unreadable = f"{path!r} is not a readable {what} file (truncated or corrupted)"
    try:
        z = np.load(path, allow_pickle=False)
        if isinstance(z, np.lib.npyio.NpzFile):
            with z:
                data = {k: z[k] for k in z.files}
        else:  # a plain .npy array
            data = {}
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except Exception as exc:  # zipfile/zlib/numpy errors of a damaged archive
        # numpy's own message may advise loading the file with allow_pickle: never pass that on
        reason = "" if "pickle" in str(exc) else f": {exc}"
        raise ValueError(unreadable + reason) from None
    found = item(data.get("magic", ""))
    if found != magic:
        if isinstance(found, str) and found.startswith("freshcore."):
            raise ValueError(
                f"{path!r} is not a freshcore {what} file: its magic string is {found!r}, not {magic!r} "
                f"(load it with {found.removeprefix('freshcore.')}.load)."
            )
        raise ValueError(f"{path!r} is not a freshcore {what} file (no {magic!r} magic string).")
    found_version = item(data.get("format_version", -1))
    if found_version not in versions:
        raise ValueError(
            f"{path!r} is a {what} file of format version {found_version!r}; this freshcore reads "
            + (f"version {versions[0]}." if len(versions) == 1 else f"versions {', '.join(map(str, versions))}.")
        )
    if digest(data) != item(data.pop("sha256", "")):
        raise ValueError(f"{path!r} is corrupted: the SHA-256 of its payload does not match.")
    del data["magic"]
    return data


class StateFile:
    """``save``/``load``, ``pickle`` and ``copy`` through a class's ``to_dict``/``from_dict`` (so they get its checks).

    A subclass sets ``FORMAT_VERSION``, ``_MAGIC`` (the magic string of its
    files) and ``_WHAT`` (what the messages call its files), and defines
    ``to_dict`` and the classmethod ``from_dict``.
    """

    FORMAT_VERSION: ClassVar[int]
    #: The format versions ``load`` reads (a subclass that reads older ones widens it).
    READABLE_VERSIONS: ClassVar[tuple[int, ...]]
    _MAGIC: ClassVar[str]
    _WHAT: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    @classmethod
    def from_dict(cls: type[_T], d: dict[str, Any]) -> _T:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict()

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(type(self).from_dict(d).__dict__)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the full state to ``path`` atomically.

        The file is an ``.npz`` archive (read with ``allow_pickle=False``)
        holding :meth:`to_dict`, a magic string naming the class, its
        ``FORMAT_VERSION`` and the SHA-256 of the payload.  It is written to a
        temporary file in the same directory, flushed to disk (``fsync``) and
        renamed over ``path`` (``os.replace``), so a crash or an error mid-save
        leaves any previous file at ``path`` intact and never a partial one.

        Parameters
        ----------
        path : str or path-like
            Destination (no suffix is added).

        Raises
        ------
        FileNotFoundError, PermissionError, OSError
            If ``path`` cannot be written (e.g. its directory does not exist).
        """
        write(path, flatten(self.to_dict()), self._MAGIC)

    @classmethod
    def load(cls: type[_T], path: str | os.PathLike[str]) -> _T:
        """Read a state written by :meth:`save`; the object continues exactly where the saved one stopped.

        Raises
        ------
        ValueError
            If the file is truncated or corrupted (unreadable archive, or a
            payload whose SHA-256 does not match), was written by another
            class (wrong magic string), is of another format version, or
            holds an inconsistent state (:meth:`from_dict`).
        FileNotFoundError
            If ``path`` does not exist.
        """
        return cls.from_dict(unflatten(read(path, cls._MAGIC, cls.READABLE_VERSIONS, cls._WHAT)))
