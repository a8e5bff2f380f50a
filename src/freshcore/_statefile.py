"""The checked, atomic state files of :class:`~freshcore.schedule.Scheduler` and
:class:`~freshcore.sharding.ShardedScheduler` (their ``save``/``load``).

A file is an ``.npz`` archive of named arrays, read with ``allow_pickle=False``:
the state, a magic string naming the class that wrote it, the ``format_version``
entry of that class, and the SHA-256 of all of it (:func:`digest`).  :func:`write`
puts it in a temporary file in the destination's directory, flushes it to disk
and renames it over the destination, so a crash or an error mid-save leaves the
previous file intact and never a partial one; :func:`read` refuses a truncated
or corrupted archive, a payload whose digest does not match, another magic
string and another format version, each with a ``ValueError`` that says which.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from typing import Any

import numpy as np


class DictState:
    """Pickle and ``copy`` through the class's ``to_dict``/``from_dict`` (so they get the same checks)."""

    def __getstate__(self) -> dict[str, Any]:
        return self.to_dict()  # type: ignore[attr-defined]

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__.update(type(self).from_dict(d).__dict__)  # type: ignore[attr-defined]


def item(x: Any) -> Any:
    """A Python scalar from a scalar or a 0-d array (npz entries are arrays)."""
    if isinstance(x, np.ndarray):
        if x.ndim != 0:
            raise ValueError(f"expected a scalar entry, got an array of shape {x.shape}")
        return x.item()
    if isinstance(x, np.generic):
        return x.item()
    return x


def digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over every entry but the digest itself: name, dtype, shape and bytes, in key order."""
    h = hashlib.sha256()
    for key in sorted(arrays):
        if key == "sha256":
            continue
        a = np.ascontiguousarray(arrays[key])
        h.update(f"{key}\0{a.dtype.str}\0{a.shape}\0".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def write(path: str | os.PathLike, arrays: dict[str, np.ndarray], magic: str) -> None:
    """Write ``arrays`` plus ``magic`` and their digest to ``path`` atomically (temporary file, fsync, rename)."""
    path = os.fspath(path)
    arrays = dict(arrays)
    arrays["magic"] = np.array(magic)
    arrays["sha256"] = np.array(digest(arrays))
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
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


def read(path: str | os.PathLike, magic: str, version: int, what: str) -> dict[str, np.ndarray]:
    """The arrays :func:`write` put in ``path`` (without ``magic`` and ``sha256``), checked.

    ``what`` names the kind of file in the messages ("scheduler").

    Raises
    ------
    ValueError
        If the archive is unreadable (truncated or corrupted), its magic string
        is not ``magic``, its ``format_version`` is not ``version`` or its
        payload does not match its SHA-256.
    FileNotFoundError, IsADirectoryError, PermissionError
        As ``open`` raises them.
    """
    path = os.fspath(path)
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
        raise ValueError(f"{path!r} is not a readable {what} file (truncated or corrupted): {exc}") from exc
    found = item(data.get("magic", ""))
    if found != magic:
        if isinstance(found, str) and found.startswith("freshcore."):
            raise ValueError(
                f"{path!r} is not a freshcore {what} file: its magic string is {found!r}, not {magic!r} "
                f"(load it with {found.removeprefix('freshcore.')}.load)."
            )
        raise ValueError(f"{path!r} is not a freshcore {what} file (no {magic!r} magic string).")
    found_version = item(data.get("format_version", -1))
    if found_version != version:
        raise ValueError(
            f"{path!r} is a {what} file of format version {found_version!r}; this freshcore reads version {version}."
        )
    if digest(data) != item(data.pop("sha256", "")):
        raise ValueError(f"{path!r} is corrupted: the SHA-256 of its payload does not match.")
    del data["magic"]
    return data
