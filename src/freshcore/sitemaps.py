"""Sitemaps as a change-signal source: parse them, and turn two successive reads into poll observations.

A crawler learns of changes by *polling* its sites' sitemaps: each ``<url>`` entry gives a page's
``<loc>`` and, optionally, its ``<lastmod>``, the time the site says the page last changed.  A read of
the sitemap shows only each page's latest ``lastmod``, so between two reads the crawler sees, per page,
only whether ``lastmod`` *moved* (several changes and false updates collapse into one observation).
That is the polled observation of :mod:`freshcore.polled_signals` (SPEC section 3b).

* :func:`parse_sitemap` -- a ``<urlset>`` or ``<sitemapindex>`` document (bytes, text, a path or a
  binary file; gzip-compressed too) into a :class:`Sitemap`: its ``loc`` URLs and ``lastmod`` times as a
  float array of POSIX seconds (NaN where a ``<url>`` has no ``<lastmod>``).
* :func:`parse_lastmod` / :func:`format_lastmod` -- W3C datetimes (every form the protocol allows:
  ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, and times to the minute, second or fraction of a second with a
  time zone ``Z`` or ``+hh:mm``/``-hh:mm``) to and from POSIX seconds.
* :func:`sitemap_xml` -- write a ``<urlset>`` or ``<sitemapindex>`` document.
* :func:`merge_sitemaps` -- the ``<urlset>`` documents a sitemap index lists, as one snapshot.
* :func:`compare_sitemaps` -- two snapshots of the same site into a :class:`SitemapChanges`: per page id
  (given a URL -> page id mapping) whether its ``lastmod`` moved and its new ``lastmod``, ready for a
  scheduler's ``poll(pages, t, moved)`` or, for one that only takes signals, ``signal_many(pages[moved], t)``.

Dates without a time are midnight UTC; a time without a time zone (not allowed by the W3C profile, but
common in the wild) is read as UTC.  Documents with a DTD are refused (a sitemap has none, and entity
declarations are the way to XML bombs).

References
----------
.. [1] sitemaps.org, "Sitemaps XML format", protocol 0.9, https://www.sitemaps.org/protocol.html
.. [2] W3C, "Date and Time Formats" (the W3C datetime profile of ISO 8601), https://www.w3.org/TR/NOTE-datetime

Examples
--------
>>> from freshcore.sitemaps import compare_sitemaps, parse_sitemap
>>> before = parse_sitemap(b'''<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
...   <url><loc>https://a.example/1</loc><lastmod>2026-01-01</lastmod></url>
...   <url><loc>https://a.example/2</loc><lastmod>2026-01-01T10:00:00Z</lastmod></url>
... </urlset>''')
>>> after = parse_sitemap(b'''<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
...   <url><loc>https://a.example/1</loc><lastmod>2026-01-01</lastmod></url>
...   <url><loc>https://a.example/2</loc><lastmod>2026-01-02T09:30:00+02:00</lastmod></url>
... </urlset>''')
>>> ch = compare_sitemaps(before, after, {"https://a.example/1": 7, "https://a.example/2": 3})
>>> ch.pages.tolist(), ch.moved.tolist()
([7, 3], [False, True])
>>> format_lastmod(ch.lastmod[1])
'2026-01-02T07:30:00Z'
"""

from __future__ import annotations

import datetime as _dt
import gzip
import io
import math
import os
import re
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple
from xml.etree import ElementTree as ET
from xml.sax.saxutils import escape

import numpy as np

__all__ = [
    "SITEMAP_NAMESPACE",
    "Sitemap",
    "SitemapChanges",
    "compare_sitemaps",
    "format_lastmod",
    "merge_sitemaps",
    "parse_lastmod",
    "parse_sitemap",
    "sitemap_xml",
]

#: The XML namespace of the sitemaps.org protocol 0.9.
SITEMAP_NAMESPACE = "http://www.sitemaps.org/schemas/sitemap/0.9"

#: Largest document :func:`parse_sitemap` reads by default (after decompression): the protocol's limit
#: is 50 MB uncompressed per sitemap, with room for slack.
MAX_BYTES = 64 * 2**20

_W3C = re.compile(
    r"(?P<y>\d{4})(?:-(?P<mo>\d{2})(?:-(?P<d>\d{2})"
    r"(?:T(?P<h>\d{2}):(?P<mi>\d{2})(?::(?P<s>\d{2})(?P<frac>\.\d+)?)?"
    r"(?P<tz>Z|[+-]\d{2}:\d{2})?)?)?)?"
)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_DTD = re.compile(rb"<!(?:DOCTYPE|ENTITY)")
_DTD_TEXT = re.compile(r"<!(?:DOCTYPE|ENTITY)")


class Sitemap(NamedTuple):
    """One read of a sitemap document.

    Attributes
    ----------
    kind : {"urlset", "sitemapindex"}
        A list of pages (``<urlset>``) or a list of sitemaps (``<sitemapindex>``).
    locs : tuple of str
        The ``<loc>`` of each entry, in document order (page URLs, or sitemap URLs for an index).
    lastmod : ndarray of float64, shape (len(locs),)
        The entry's ``<lastmod>`` in POSIX seconds (UTC), NaN where it has none.
    """

    kind: str
    locs: tuple[str, ...]
    lastmod: np.ndarray


class SitemapChanges(NamedTuple):
    """What a crawler learns from two successive reads of a site's sitemap.

    Attributes
    ----------
    pages : ndarray of int64, shape (n,)
        The polled pages: the page id of each URL present in both reads (and in the mapping, if one was
        given), in the order of the second read.  Without a mapping, the URL's index in the second read.
    moved : ndarray of bool, shape (n,)
        Whether the page's ``lastmod`` differs between the reads (later or, rarely, earlier).  False when
        either read has no ``lastmod`` for it: no information.
    lastmod : ndarray of float64, shape (n,)
        The page's ``lastmod`` in the second read, POSIX seconds, NaN where absent.
    urls : tuple of str
        The URL of each polled page.
    added : tuple of str
        URLs of the second read missing from the first (no observation: a new page, not a move).
    removed : tuple of str
        URLs of the first read missing from the second.
    unknown : tuple of str
        URLs of the second read that the mapping does not name (ignored).
    """

    pages: np.ndarray
    moved: np.ndarray
    lastmod: np.ndarray
    urls: tuple[str, ...]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    unknown: tuple[str, ...]


def parse_lastmod(text: str) -> float:
    """A W3C datetime (a sitemap's ``<lastmod>``) as POSIX seconds.

    Parameters
    ----------
    text : str
        ``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, ``YYYY-MM-DDThh:mmTZD``, ``YYYY-MM-DDThh:mm:ssTZD`` or
        ``YYYY-MM-DDThh:mm:ss.sTZD`` with ``TZD`` ``Z``, ``+hh:mm`` or ``-hh:mm``; surrounding
        whitespace is ignored.  A missing month or day is the first; a date without a time is midnight
        UTC; a time without ``TZD`` is read as UTC.

    Returns
    -------
    seconds : float
        Seconds since 1970-01-01T00:00:00Z (fractions of a second kept to float precision).

    Raises
    ------
    ValueError
        If ``text`` is not one of these forms or names no real date or time (month 13, 24:00, ...).
    TypeError
        If ``text`` is not a string.

    Examples
    --------
    >>> parse_lastmod("1970-01-02")
    86400.0
    >>> parse_lastmod("1970-01-01T01:00:00.5+01:00")
    0.5
    """
    if not isinstance(text, str):
        raise TypeError(f"A lastmod must be a string (a W3C datetime). Got {text!r} of type {type(text).__name__}.")
    s = text.strip()
    m = _W3C.fullmatch(s)
    if m is None:
        raise ValueError(
            f"Bad lastmod {text!r}: not a W3C datetime (YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss[.s]]TZD "
            "with TZD Z, +hh:mm or -hh:mm)."
        )
    g = m.groupdict()
    tz = _dt.timezone.utc
    if g["tz"] and g["tz"] != "Z":
        sign = 1 if g["tz"][0] == "+" else -1
        hh, mm = int(g["tz"][1:3]), int(g["tz"][4:6])
        if hh > 23 or mm > 59:
            raise ValueError(f"Bad lastmod {text!r}: time zone offset {g['tz']} out of range.")
        tz = _dt.timezone(sign * _dt.timedelta(hours=hh, minutes=mm))
    try:
        d = _dt.datetime(int(g["y"]), int(g["mo"] or 1), int(g["d"] or 1), int(g["h"] or 0), int(g["mi"] or 0),
                         int(g["s"] or 0), tzinfo=tz)
    except ValueError as e:
        raise ValueError(f"Bad lastmod {text!r}: {e}.") from None
    whole = (d - _EPOCH) // _dt.timedelta(seconds=1)
    return float(whole) + (float(g["frac"]) if g["frac"] else 0.0)


def _lastmods(texts: list[str]) -> np.ndarray:
    """:func:`parse_lastmod` of many texts at once (numpy parses and range-checks the date and time); a
    ValueError without detail if any is bad (the caller finds which)."""
    n = len(texts)
    iso: list[str] = []
    offset = np.zeros(n, dtype=np.int64)
    frac = np.zeros(n)
    for k, text in enumerate(texts):
        m = _W3C.fullmatch(text.strip())
        if m is None:
            raise ValueError
        y, mo, d, h, mi, sec, fr, tz = m.groups()
        if y == "0000":
            raise ValueError
        iso.append(f"{y}-{mo or '01'}-{d or '01'}T{h or '00'}:{mi or '00'}:{sec or '00'}")
        if fr:
            frac[k] = float(fr)
        if tz and tz != "Z":
            hh, mm = int(tz[1:3]), int(tz[4:6])
            if hh > 23 or mm > 59:
                raise ValueError
            offset[k] = (1 if tz[0] == "+" else -1) * (3600 * hh + 60 * mm)
    local = np.array(iso, dtype="datetime64[s]").astype(np.int64)
    return (local - offset).astype(np.float64) + frac


def format_lastmod(seconds: Any, digits: int = 0) -> Any:
    """POSIX seconds as W3C datetimes in UTC (``YYYY-MM-DDThh:mm:ssZ``), the inverse of :func:`parse_lastmod`.

    Parameters
    ----------
    seconds : float or array_like of float
        Finite times in POSIX seconds.
    digits : int, default=0
        Digits of the fraction of a second, 0 to 6 (truncated, so a formatted time never lies after the
        time it formats).

    Returns
    -------
    text : str or list of str
        One string for a scalar, a list for an array.

    Raises
    ------
    ValueError
        If a time is not finite (naming its index) or ``digits`` is out of range.

    Examples
    --------
    >>> format_lastmod(86400.75, digits=1)
    '1970-01-02T00:00:00.7Z'
    >>> format_lastmod([0.0, 60.0])
    ['1970-01-01T00:00:00Z', '1970-01-01T00:01:00Z']
    """
    if isinstance(digits, bool) or not isinstance(digits, int) or not 0 <= digits <= 6:
        raise ValueError(f"The 'digits' parameter of format_lastmod must be an integer in [0, 6]. Got {digits!r}.")
    a = np.asarray(seconds, dtype=np.float64)
    flat = a.reshape(-1)
    bad = np.flatnonzero(~np.isfinite(flat))
    if len(bad):
        raise ValueError(f"The 'seconds' parameter of format_lastmod must be finite. Got {flat[bad[0]]!r} at index "
                         f"{int(bad[0])}.")
    ticks = np.floor(flat * 10.0**digits).astype(np.int64) * 10 ** (6 - digits)
    text = np.datetime_as_string(ticks.astype("datetime64[us]"), unit="us").tolist()
    cut = 6 - digits if digits else 7  # drop the microseconds beyond `digits` (and the point when there are none)
    text = [t[:len(t) - cut] for t in text]
    out = [f"{t}Z" for t in text]
    return out[0] if a.ndim == 0 else out


def sitemap_xml(locs: Iterable[str], lastmod: Any = None, *, index: bool = False, digits: int = 0) -> bytes:
    """A sitemap document: a ``<urlset>`` of pages or a ``<sitemapindex>`` of sitemaps.

    Parameters
    ----------
    locs : iterable of str
        The URLs (escaped here).
    lastmod : array_like of float, optional
        POSIX seconds per URL; NaN leaves that entry without ``<lastmod>``.  Default: none at all.
    index : bool, default=False
        Write a ``<sitemapindex>`` (entries ``<sitemap>``) instead of a ``<urlset>`` (entries ``<url>``).
    digits : int, default=0
        Digits of the fraction of a second in the ``lastmod`` times (:func:`format_lastmod`).

    Returns
    -------
    document : bytes
        UTF-8 XML in the sitemaps.org namespace.

    Raises
    ------
    ValueError
        If ``lastmod`` and ``locs`` differ in length, or a ``lastmod`` is infinite.

    Examples
    --------
    >>> doc = sitemap_xml(["https://a.example/?q=1&r=2"], [0.0])
    >>> parse_sitemap(doc).locs
    ('https://a.example/?q=1&r=2',)
    """
    urls = list(locs)
    entry = "sitemap" if index else "url"
    if lastmod is None:
        stamps: list[str | None] = [None] * len(urls)
    else:
        lm = np.asarray(lastmod, dtype=np.float64).reshape(-1)
        if len(lm) != len(urls):
            raise ValueError(f"sitemap_xml got {len(urls)} locs but {len(lm)} lastmod times.")
        inf = np.flatnonzero(np.isinf(lm))
        if len(inf):
            raise ValueError(f"The 'lastmod' parameter of sitemap_xml must be finite or NaN. Got {lm[inf[0]]!r} at "
                             f"index {int(inf[0])}.")
        have = ~np.isnan(lm)
        stamps = [None] * len(urls)
        for k, s in zip(np.flatnonzero(have).tolist(), format_lastmod(lm[have], digits) if have.any() else []):
            stamps[k] = s
    root = "sitemapindex" if index else "urlset"
    parts = [f'<?xml version="1.0" encoding="UTF-8"?>\n<{root} xmlns="{SITEMAP_NAMESPACE}">\n']
    for u, s in zip(urls, stamps):
        lm_part = "" if s is None else f"<lastmod>{s}</lastmod>"
        parts.append(f"<{entry}><loc>{escape(u)}</loc>{lm_part}</{entry}>\n")
    parts.append(f"</{root}>\n")
    return "".join(parts).encode("utf-8")


def _read(source: Any, max_bytes: int) -> bytes | str:
    """The document: bytes (decompressed), or the text itself (kept as text: its XML declaration may name
    another encoding, which applies to bytes only)."""
    data: bytes | str
    if isinstance(source, str):
        data = source
    elif isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, os.PathLike):
        with open(source, "rb") as f:
            data = f.read(max_bytes + 1)
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if not isinstance(data, (bytes, str)):
            raise TypeError(f"parse_sitemap: the file's read() returned {type(data).__name__}, not bytes or str.")
    else:
        raise TypeError(
            "The 'source' parameter of parse_sitemap must be the document (bytes or str), a path (os.PathLike) or a "
            f"file object. Got {type(source).__name__}."
        )
    if isinstance(data, bytes) and data[:2] == b"\x1f\x8b":  # gzip (sitemap.xml.gz)
        try:
            with gzip.GzipFile(fileobj=io.BytesIO(data)) as z:
                data = z.read(max_bytes + 1)
        except (OSError, EOFError, zlib.error) as e:
            raise ValueError(f"parse_sitemap: bad gzip data: {e}.") from None
    if len(data) > max_bytes:
        raise ValueError(f"parse_sitemap: the document is larger than max_bytes = {max_bytes} bytes (characters for "
                         "a text).")
    return data


def _local(tag: str) -> tuple[str, str]:
    """(namespace, local name) of an ElementTree tag."""
    if tag.startswith("{"):
        ns, _, name = tag[1:].partition("}")
        return ns, name
    return "", tag


def parse_sitemap(source: Any, *, max_bytes: int = MAX_BYTES) -> Sitemap:
    """Parse a sitemap (``<urlset>``) or sitemap index (``<sitemapindex>``).

    Parameters
    ----------
    source : bytes, str, os.PathLike or binary file
        The document itself (bytes or text), a path to it, or an open file; gzip-compressed data is
        decompressed.  A ``str`` is always the document, never a path (pass a :class:`pathlib.Path`); bytes
        are decoded as their XML declaration says (UTF-8 without one).
    max_bytes : int, default=MAX_BYTES
        Refuse documents larger than this (bytes after decompression; characters for a text).

    Returns
    -------
    sitemap : Sitemap
        ``kind``, the ``<loc>`` of each entry and its ``<lastmod>`` (POSIX seconds, NaN where absent).

    Raises
    ------
    ValueError
        If the document is not well-formed XML (with the parser's line and column), has a DTD, its root is
        neither ``urlset`` nor ``sitemapindex``, an entry has no or an empty ``<loc>`` (naming the entry's
        index), or a ``<lastmod>`` is not a W3C datetime (naming the entry's index and its ``<loc>``).
    TypeError
        If ``source`` is none of the types above.

    Notes
    -----
    Entries are the root's children named ``url`` (``sitemap`` in an index) in the root's namespace
    (the sitemaps.org one, an older one, or none); their ``loc`` and ``lastmod`` children in the same
    namespace are read, and everything else (``changefreq``, ``priority``, image, video, news and
    ``xhtml:link`` extensions) is ignored.  ``<loc>`` text is stripped of surrounding whitespace.

    Examples
    --------
    >>> sm = parse_sitemap('''<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
    ...   <sitemap><loc>https://a.example/s1.xml</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
    ...   <sitemap><loc>https://a.example/s2.xml.gz</loc></sitemap>
    ... </sitemapindex>''')
    >>> sm.kind, sm.locs[1], format_lastmod(sm.lastmod[0]), sm.lastmod.tolist()[1]
    ('sitemapindex', 'https://a.example/s2.xml.gz', '2004-10-01T18:23:17Z', nan)
    """
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
        raise ValueError(f"The 'max_bytes' parameter of parse_sitemap must be an integer >= 1. Got {max_bytes!r}.")
    data = _read(source, max_bytes)
    if (_DTD_TEXT.search(data) if isinstance(data, str) else _DTD.search(data)):
        raise ValueError("parse_sitemap: the document has a DTD (<!DOCTYPE or <!ENTITY); a sitemap has none.")
    try:
        root = ET.fromstring(data)
    except ET.ParseError as e:
        line, col = e.position
        raise ValueError(f"parse_sitemap: not well-formed XML at line {line}, column {col + 1}: {e}.") from None
    ns, kind = _local(root.tag)
    if kind not in ("urlset", "sitemapindex"):
        raise ValueError(f"parse_sitemap: the root element is <{kind}>, not <urlset> or <sitemapindex>.")
    q = (lambda name: f"{{{ns}}}{name}") if ns else (lambda name: name)
    entry = q("url" if kind == "urlset" else "sitemap")
    loc_tag, lastmod_tag = q("loc"), q("lastmod")
    locs: list[str] = []
    texts: list[str] = []
    have: list[int] = []
    for k, el in enumerate(root.iterfind(entry)):
        loc_el = el.find(loc_tag)
        loc = (loc_el.text or "").strip() if loc_el is not None else ""
        if not loc:
            what = "no <loc>" if loc_el is None else "an empty <loc>"
            raise ValueError(f"parse_sitemap: <{_local(entry)[1]}> entry {k} has {what}.")
        lm_el = el.find(lastmod_tag)
        if lm_el is not None:
            texts.append(lm_el.text or "")
            have.append(k)
        locs.append(loc)
    stamps = np.full(len(locs), np.nan)
    try:
        stamps[have] = _lastmods(texts)
    except ValueError:
        for k, text in zip(have, texts):
            try:
                parse_lastmod(text)
            except ValueError as e:
                raise ValueError(f"parse_sitemap: entry {k} ({locs[k]}): {e}") from None
        raise  # pragma: no cover - _lastmods and parse_lastmod refuse the same texts
    return Sitemap(kind, tuple(locs), stamps)


def _check_sitemap(x: Any, name: str, caller: str, kind: str | None = "urlset") -> Sitemap:
    if not isinstance(x, Sitemap):
        raise TypeError(f"The {name!r} parameter of {caller} must be a Sitemap (parse_sitemap). Got "
                        f"{type(x).__name__}.")
    if kind is not None and x.kind != kind:
        raise ValueError(f"The {name!r} parameter of {caller} must be a <{kind}> sitemap. Got a <{x.kind}>.")
    return x


def _latest(sm: Sitemap) -> dict[str, float]:
    """URL -> lastmod; a URL listed twice keeps its latest lastmod (NaN only if it never has one)."""
    out: dict[str, float] = {}
    for u, t in zip(sm.locs, sm.lastmod.tolist()):
        old = out.get(u)
        if old is None or math.isnan(old) or (not math.isnan(t) and t > old):
            out[u] = t
    return out


def merge_sitemaps(sitemaps: Iterable[Sitemap]) -> Sitemap:
    """The ``<urlset>`` sitemaps of a sitemap index as one snapshot of the site.

    Parameters
    ----------
    sitemaps : iterable of Sitemap
        ``<urlset>`` sitemaps (the documents an index lists).

    Returns
    -------
    merged : Sitemap
        A ``urlset`` with each URL once, in order of first appearance; a URL listed more than once keeps
        its latest ``lastmod``.

    Raises
    ------
    TypeError, ValueError
        If an item is not a ``urlset`` :class:`Sitemap` (naming its index).

    Examples
    --------
    >>> a = parse_sitemap('<urlset><url><loc>u</loc><lastmod>2000</lastmod></url></urlset>')
    >>> b = parse_sitemap('<urlset><url><loc>u</loc><lastmod>2001</lastmod></url><url><loc>v</loc></url></urlset>')
    >>> m = merge_sitemaps([a, b])
    >>> m.locs, format_lastmod(m.lastmod[0])
    (('u', 'v'), '2001-01-01T00:00:00Z')
    """
    latest: dict[str, float] = {}
    for k, sm in enumerate(sitemaps):
        _check_sitemap(sm, f"sitemaps[{k}]", "merge_sitemaps")
        for u, t in _latest(sm).items():
            old = latest.get(u)
            if old is None or math.isnan(old) or (not math.isnan(t) and t > old):
                latest[u] = t
    return Sitemap("urlset", tuple(latest), np.fromiter(latest.values(), dtype=np.float64, count=len(latest)))


def compare_sitemaps(before: Sitemap, after: Sitemap, page_ids: Mapping[str, int] | None = None) -> SitemapChanges:
    """Two successive reads of a site's sitemap as one poll observation per page.

    Parameters
    ----------
    before, after : Sitemap
        ``<urlset>`` snapshots (:func:`parse_sitemap`, :func:`merge_sitemaps`), ``before`` read first.
    page_ids : mapping of str to int, optional
        The crawler's page id of each URL it tracks (ids ``>= 0``); URLs it does not name are listed in
        ``unknown`` and otherwise ignored.  Default: the URL's index in ``after``.

    Returns
    -------
    changes : SitemapChanges
        ``pages``, ``moved`` and ``lastmod`` of the URLs in both reads, in ``after``'s order, and the
        URLs ``added``, ``removed`` and ``unknown``.

    Raises
    ------
    TypeError
        If ``before`` or ``after`` is not a :class:`Sitemap`, or a page id is not an integer.
    ValueError
        If either is a sitemap index, a page id is negative, or two polled URLs have the same page id.

    Notes
    -----
    ``moved`` is the observation of SPEC section 3b: whether the page's signal moved in the window between
    the reads.  A URL listed twice in one read counts with its latest ``lastmod``.  Without a ``lastmod``
    in either read the page has no observation (``moved`` False); a scheduler fed ``moved`` would read that
    as "no signal", so a site whose sitemap has no ``lastmod`` should not be polled.

    Examples
    --------
    >>> a = parse_sitemap('<urlset><url><loc>u</loc><lastmod>2000</lastmod></url><url><loc>v</loc></url></urlset>')
    >>> b = parse_sitemap('<urlset><url><loc>w</loc></url><url><loc>u</loc><lastmod>2001</lastmod></url></urlset>')
    >>> ch = compare_sitemaps(a, b)
    >>> ch.pages.tolist(), ch.moved.tolist(), ch.urls, ch.added, ch.removed
    ([1], [True], ('u',), ('w',), ('v',))
    """
    caller = "compare_sitemaps"
    _check_sitemap(before, "before", caller)
    _check_sitemap(after, "after", caller)
    old = _latest(before)
    new = _latest(after)
    order = {u: k for k, u in reversed(list(enumerate(after.locs)))} if page_ids is None else None
    urls: list[str] = []
    ids: list[int] = []
    added: list[str] = []
    unknown: list[str] = []
    for u in new:
        if page_ids is None:
            assert order is not None
            pid = order[u]
        else:
            got = page_ids.get(u)
            if got is None:
                unknown.append(u)
                continue
            if isinstance(got, (bool, np.bool_)) or not isinstance(got, (int, np.integer)):
                raise TypeError(f"The 'page_ids' parameter of {caller} must map URLs to integer ids. Got {got!r} for "
                                f"{u!r}.")
            pid = int(got)
            if pid < 0:
                raise ValueError(f"The 'page_ids' parameter of {caller} must map URLs to ids >= 0. Got {pid} for "
                                 f"{u!r}.")
        if u not in old:
            added.append(u)
            continue
        urls.append(u)
        ids.append(pid)
    pages = np.array(ids, dtype=np.int64)
    if len(np.unique(pages)) != len(pages):
        srt = np.sort(pages)
        dup = int(srt[np.flatnonzero(srt[1:] == srt[:-1])[0]])
        raise ValueError(f"The 'page_ids' parameter of {caller} maps two polled URLs to page id {dup}.")
    was = np.array([old[u] for u in urls], dtype=np.float64)
    now = np.array([new[u] for u in urls], dtype=np.float64)
    with np.errstate(invalid="ignore"):
        moved = (was != now) & ~np.isnan(was) & ~np.isnan(now)
    removed = tuple(u for u in old if u not in new)
    return SitemapChanges(pages, moved, now, tuple(urls), tuple(added), removed, tuple(unknown))
