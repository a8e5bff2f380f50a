"""A local test web with noisy sitemaps, and a real crawl loop over it (issue 19).

The simulator (:func:`freshcore.policy_simulation.simulate`) judges policies on drawn events; this module
judges them the way a crawler meets the web: over HTTP, against a server whose pages change, learning of
the changes only by polling a sitemap whose ``lastmod`` times are noisy change signals.

* :class:`LocalWeb` -- an HTTP server on ``127.0.0.1`` (an ephemeral port) in a background thread, with an
  accelerated clock (:class:`VirtualClock`): ``n`` pages whose content changes as Poisson processes, each
  change moving the page's sitemap ``lastmod`` with probability ``lambda`` (its recall) and false moves at
  rate ``nu`` (SPEC section 3's model), all drawn in advance from a seed.  It serves ``/page/<i>``, the
  sitemap ``/sitemap.xml`` (or a sitemap index over group sitemaps ``/sitemap-<g>.xml``) and ``/clock``,
  records every fetch (page, virtual time, version served) and computes the crawler's freshness exactly from
  the change times: the *ground truth*.
* :func:`run_crawler` -- a crawl loop: ``R`` fetches per unit of virtual time over HTTP (one keep-alive
  connection), the sitemap polled every ``w``, driving any :class:`~freshcore.policies.CrawlPolicy`.
* :data:`POLICIES`, :func:`make_policy` -- the policies by name (a factory each), :func:`synthetic_pages`
  -- the demo's synthetic web, and :func:`crawl_local_web` -- one whole experiment (a web, a policy, the
  loop, the ground truth).

Time
----
Virtual time is in the model's unit (days for the demo's rates): ``t = speed * (wall seconds since
start)``.  Virtual time ``t`` is the instant ``epoch + t * time_unit`` POSIX seconds (``time_unit`` 86 400:
a virtual day), which is how ``lastmod`` times are written (to the second, in UTC).  The crawl loop keeps
to its schedule: the ``j``-th fetch is due at ``j/R``, the ``k``-th poll at ``k w``; it sleeps until each is
due and reports how late each actually went out (:class:`CrawlReport`).  The ground truth uses the
server's own time of each fetch, so lateness costs the crawler what it would cost a real one.

Freshness
---------
The crawler holds a copy of every page, version 0, at time 0 (as in the simulator) and the version it was
served at each fetch afterwards.  A page is fresh at ``t`` when its copy's version is the page's current one,
i.e. no change since the fetch.  :meth:`LocalWeb.freshness` is the time average over ``[start, stop]`` of
the fraction of fresh pages, or the ``mu``-weighted fraction (the fraction of requests served fresh, the
accuracy of Busa-Fekete et al. (2025)), computed exactly from the change times.

How the polls reach the policy
------------------------------
At each poll the loop reads the sitemap and compares it with the previous read
(:func:`freshcore.sitemaps.compare_sitemaps`): per page, whether its ``lastmod`` moved.  A policy with
``poll(pages, t, moved)`` (the polled value kind of the scheduler) gets every observation; a policy without
it but with ``signal_many`` gets one signal at the poll time per moved page (the value of Busa-Fekete et
al. (2025) "fed the polls"); any other policy gets nothing.  A poll due at a tick's time comes first.

References
----------
.. [1] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
.. [2] sitemaps.org, "Sitemaps XML format", protocol 0.9, https://www.sitemaps.org/protocol.html

Examples
--------
>>> from freshcore.testweb import LocalWeb, run_crawler, synthetic_pages
>>> from freshcore.policies import RoundRobin
>>> pages = synthetic_pages(20, rng=1)
>>> with LocalWeb(pages, horizon=2.0, speed=20.0, rng=1) as web:
...     report = run_crawler(web.url, RoundRobin(20, 10.0), web.clock, until=2.0, poll_interval=0.5)
>>> report.n_fetches, report.n_polls, report.errors
(20, 5, 0)
>>> 0.0 <= web.freshness(0.0, 2.0) <= 1.0
True
"""

from __future__ import annotations

import http.client
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import numpy as np

from freshcore._papers import BUSA_FEKETE_2025, cites
from freshcore._validation import check_int, check_rng, check_scalar
from freshcore.pages import PageModel, check_pages
from freshcore.policies import CrawlPolicy, RoundRobin
from freshcore.sitemaps import Sitemap, compare_sitemaps, merge_sitemaps, parse_sitemap, sitemap_xml

__all__ = [
    "POLICIES",
    "CrawlReport",
    "CrawlResult",
    "FetchLog",
    "LocalWeb",
    "VirtualClock",
    "crawl_local_web",
    "make_policy",
    "run_crawler",
    "synthetic_pages",
]

#: Virtual time 0 of a :class:`LocalWeb` by default: 2026-01-01T00:00:00Z in POSIX seconds.
DEFAULT_EPOCH = 1767225600.0

_PAGE_PATH = re.compile(r"/page/(\d+)")
_GROUP_PATH = re.compile(r"/sitemap-(\d+)\.xml")


class VirtualClock:
    """An accelerated clock: virtual time ``t = speed * (wall seconds since start)``.

    Parameters
    ----------
    speed : float
        Units of virtual time per wall second, ``> 0``.
    epoch : float, default=DEFAULT_EPOCH
        POSIX seconds of virtual time 0, for :meth:`to_posix` (how the site writes ``lastmod`` times).
    time_unit : float, default=86400.0
        POSIX seconds per unit of virtual time (a day).

    Examples
    --------
    >>> c = VirtualClock(1000.0)
    >>> c.to_posix(1.5) - c.epoch
    129600.0
    >>> c.start()
    >>> c.sleep_until(5.0)
    >>> c.now() >= 5.0
    True
    """

    def __init__(self, speed: float, epoch: float = DEFAULT_EPOCH, time_unit: float = 86400.0) -> None:
        caller = "VirtualClock"
        self._speed = check_scalar(speed, "speed", caller, low=0.0, low_inclusive=False)
        self.epoch = check_scalar(epoch, "epoch", caller)
        self.time_unit = check_scalar(time_unit, "time_unit", caller, low=0.0, low_inclusive=False)
        self._origin: float | None = None

    def to_posix(self, t: Any) -> Any:
        """Virtual time(s) ``t`` as POSIX seconds: ``epoch + t * time_unit``."""
        return self.epoch + np.asarray(t, dtype=np.float64) * self.time_unit if np.ndim(t) else \
            self.epoch + float(t) * self.time_unit

    @property
    def speed(self) -> float:
        """Units of virtual time per wall second."""
        return self._speed

    @property
    def started(self) -> bool:
        """Whether :meth:`start` was called."""
        return self._origin is not None

    def start(self) -> None:
        """Set virtual time 0 to now."""
        self._origin = time.perf_counter()

    def now(self) -> float:
        """The virtual time now.

        Raises
        ------
        RuntimeError
            If the clock was not started.
        """
        if self._origin is None:
            raise RuntimeError("VirtualClock.now: the clock is not started.")
        return (time.perf_counter() - self._origin) * self._speed

    def sleep_until(self, t: float) -> None:
        """Sleep until virtual time ``t`` (return at once if it has passed)."""
        while True:
            left = (t - self.now()) / self._speed
            if left <= 0:
                return
            time.sleep(left)


class FetchLog(NamedTuple):
    """The fetches a :class:`LocalWeb` served, in the order it served them.

    Attributes
    ----------
    page : ndarray of int64
        The page fetched.
    time : ndarray of float64
        Virtual time at which the server read the page's version.
    version : ndarray of int64
        The version served: the number of the page's changes up to that time.
    """

    page: np.ndarray
    time: np.ndarray
    version: np.ndarray


def _flat_events(counts: np.ndarray, times: np.ndarray, pages: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Event times sorted by (page, time) and the offsets of each page's run (length m + 1)."""
    order = np.lexsort((times, pages))
    off = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=off[1:])
    return times[order], off


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # ThreadingMixIn joins only non-daemon handler threads in server_close
    block_on_close = True
    allow_reuse_address = False

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self.connections_lock:
            self.connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self.connections_lock:
            self.connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        """Wake the handler threads blocked on idle keep-alive connections."""
        with self.connections_lock:
            conns = list(self.connections)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@cites(BUSA_FEKETE_2025)
class LocalWeb:
    """A local web of changing pages with a noisy sitemap, served over HTTP on ``127.0.0.1``.

    Parameters
    ----------
    pages : PageModel
        Per page ``i``: change rate ``Delta_i``, importance ``mu_i`` (the weights of
        :meth:`freshness`), recall ``lambda_i`` and false-move rate ``nu_i`` of its ``lastmod``.
    horizon : float
        Virtual time up to which events are drawn, ``> 0``: no page changes later, and :meth:`freshness`
        covers windows in ``[0, horizon]``.
    speed : float, default=1.0
        Virtual time per wall second (:class:`VirtualClock`).
    rng : int seed or numpy.random.Generator, default=0
        Source of the events: the same seed gives the same changes and moves whatever the crawler does.
    sitemap_groups : int, default=1
        With 1, ``/sitemap.xml`` lists every page.  With ``k > 1`` it is a sitemap index of ``k`` sitemaps
        ``/sitemap-0.xml ... /sitemap-{k-1}.xml`` (contiguous blocks of pages), each listed with the latest
        ``lastmod`` of its pages.
    epoch : float, default=DEFAULT_EPOCH
        POSIX seconds of virtual time 0 (2026-01-01T00:00:00Z).
    time_unit : float, default=86400.0
        Seconds per unit of virtual time, for the ``lastmod`` times (a day).

    Attributes
    ----------
    pages : PageModel
        The model.
    horizon : float
        See above.
    clock : VirtualClock
        Started by :meth:`start`.
    change_times, move_times : list of ndarray
        Per page, its change times and its ``lastmod`` move times (signalled changes and false moves),
        increasing, in ``(0, horizon]``.

    Notes
    -----
    Events: per page, Poisson(``Delta_i``) changes on ``(0, horizon]``, each signalled (its ``lastmod``
    moves then) with probability ``lambda_i``, and Poisson(``nu_i``) false moves.  Every ``lastmod``
    starts at virtual time 0.  ``/page/<i>`` answers ``page i version v`` (``v`` the number of changes so
    far) and is recorded in :meth:`fetch_log`; ``/clock`` answers JSON ``{"time", "speed", "epoch",
    "time_unit"}`` (for a crawler in another process).  HTTP/1.1 with keep-alive.  Use it as a context
    manager, or call :meth:`start` and :meth:`stop`: stopping closes every connection and joins every
    thread the server started.

    Examples
    --------
    >>> import urllib.request
    >>> from freshcore.testweb import LocalWeb, synthetic_pages
    >>> with LocalWeb(synthetic_pages(3), horizon=10.0, speed=1.0) as web:
    ...     body = urllib.request.urlopen(web.url + "/page/2").read()
    >>> body.startswith(b"<html>"), web.fetch_log().page.tolist()
    (True, [2])
    """

    def __init__(self, pages: PageModel, horizon: float, *, speed: float = 1.0, rng: Any = 0,
                 sitemap_groups: int = 1, epoch: float = DEFAULT_EPOCH, time_unit: float = 86400.0) -> None:
        caller = "LocalWeb"
        self.pages = check_pages(pages, caller)
        self.horizon = check_scalar(horizon, "horizon", caller, low=0.0, low_inclusive=False)
        gen = check_rng(rng, caller)
        m = len(self.pages)
        self._groups = check_int(sitemap_groups, "sitemap_groups", caller, low=1, high=max(1, m))
        self.epoch = check_scalar(epoch, "epoch", caller)
        self.time_unit = check_scalar(time_unit, "time_unit", caller, low=0.0, low_inclusive=False)
        self.clock = VirtualClock(check_scalar(speed, "speed", caller, low=0.0, low_inclusive=False), self.epoch,
                                  self.time_unit)
        ids = np.arange(m)
        h = self.horizon
        # changes, then which are signalled, then false moves: three draws in a fixed order
        n_ch = gen.poisson(self.pages.change_rate * h)
        ch_page = np.repeat(ids, n_ch)
        ch_t = gen.uniform(0.0, h, int(n_ch.sum()))
        self._change_t, self._change_off = _flat_events(n_ch, ch_t, ch_page)
        signalled = gen.random(len(self._change_t)) < np.repeat(self.pages.recall, n_ch)
        n_false = gen.poisson(self.pages.false_rate * h)
        fa_t = gen.uniform(0.0, h, int(n_false.sum()))
        sig_page = np.repeat(ids, n_ch)[signalled]
        n_sig = np.bincount(sig_page, minlength=m)
        mv_page = np.concatenate([sig_page, np.repeat(ids, n_false)])
        mv_t = np.concatenate([self._change_t[signalled], fa_t])
        self._move_t, self._move_off = _flat_events(n_sig + n_false, mv_t, mv_page)
        self._n_true_moves = int(signalled.sum())
        self.change_times = np.split(self._change_t, self._change_off[1:-1])
        self.move_times = np.split(self._move_t, self._move_off[1:-1])
        self._blocks = np.array_split(ids, self._groups)
        self._lock = threading.Lock()
        self._fetch_page: list[int] = []
        self._fetch_time: list[float] = []
        self._fetch_version: list[int] = []
        self._sitemap_reads: list[tuple[float, str]] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._url = ""
        self._sitemap_cache: tuple[float, np.ndarray] | None = None

    # ---- lifecycle ------------------------------------------------------------------------------------
    def start(self) -> LocalWeb:
        """Bind an ephemeral port on 127.0.0.1, start serving in a background thread and start the clock.

        Raises
        ------
        RuntimeError
            If the web was already started.
        """
        if self._server is not None or self.clock.started:
            raise RuntimeError("LocalWeb.start: already started (a LocalWeb serves one crawl).")
        self._server = _Server(self._handler_class())
        port = self._server.server_address[1]
        self._url = f"http://127.0.0.1:{port}"
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="LocalWeb", daemon=True)
        self.clock.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving: close every connection, join the server's threads and close its socket (idempotent)."""
        server, thread = self._server, self._thread
        if server is None or thread is None:
            return
        server.shutdown()
        server.close_connections()
        server.server_close()  # joins the handler threads (block_on_close)
        thread.join()
        self._thread = None
        self._server = None

    def __enter__(self) -> LocalWeb:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` while serving (empty before :meth:`start`)."""
        return self._url

    @property
    def running(self) -> bool:
        """Whether the server is serving."""
        return self._server is not None

    def page_url(self, page: int) -> str:
        """The URL of page ``page``."""
        return f"{self._url}/page/{page}"

    def page_ids(self) -> dict[str, int]:
        """URL -> page id of every page (what a crawler of this site knows)."""
        return {self.page_url(i): i for i in range(len(self.pages))}

    # ---- the web's state at virtual time t ----------------------------------------------------------------
    def version(self, page: int, t: float) -> int:
        """Number of changes of ``page`` in ``(0, t]``: the version served at ``t``."""
        a, b = self._change_off[page], self._change_off[page + 1]
        return int(np.searchsorted(self._change_t[a:b], t, side="right"))

    def lastmod(self, t: float) -> np.ndarray:
        """Each page's ``lastmod`` at virtual time ``t`` (virtual time of its latest move, 0 before any)."""
        cs = np.zeros(len(self._move_t) + 1, dtype=np.int64)
        np.cumsum(self._move_t <= t, out=cs[1:])
        cnt = cs[self._move_off[1:]] - cs[self._move_off[:-1]]
        last = self._move_off[:-1] + cnt - 1
        return np.where(cnt > 0, self._move_t[np.maximum(last, 0)] if len(self._move_t) else 0.0, 0.0)

    def _posix(self, t: np.ndarray) -> np.ndarray:
        return self.clock.to_posix(t)

    def moves_between(self, start: float, stop: float) -> int:
        """Number of ``lastmod`` moves (signalled changes and false moves) in ``(start, stop]``, all pages."""
        return int(((self._move_t > start) & (self._move_t <= stop)).sum())

    def changes_between(self, start: float, stop: float) -> int:
        """Number of page changes in ``(start, stop]``, all pages."""
        return int(((self._change_t > start) & (self._change_t <= stop)).sum())

    # ---- ground truth ---------------------------------------------------------------------------------
    def fetch_log(self) -> FetchLog:
        """Every fetch served so far: page, virtual time, version."""
        with self._lock:
            return FetchLog(np.array(self._fetch_page, dtype=np.int64), np.array(self._fetch_time, dtype=np.float64),
                            np.array(self._fetch_version, dtype=np.int64))

    def sitemap_reads(self) -> list[tuple[float, str]]:
        """``(virtual time, path)`` of every sitemap document served."""
        with self._lock:
            return list(self._sitemap_reads)

    def fresh_time(self, start: float, stop: float) -> np.ndarray:
        """Per page, the virtual time in ``[start, stop]`` during which the crawler's copy was current.

        Parameters
        ----------
        start, stop : float
            The window, ``0 <= start <= stop <= horizon``.

        Returns
        -------
        fresh : ndarray of float64, shape (n_pages,)
            Exact, from the change times and :meth:`fetch_log`, with every page's copy at time 0 of
            version 0.  Fetches after ``stop`` do not count; a window ending after the last fetch assumes
            none until ``stop``.

        Raises
        ------
        ValueError
            If the window is not within ``[0, horizon]``.
        """
        caller = "LocalWeb.fresh_time"
        a = check_scalar(start, "start", caller, low=0.0, high=self.horizon)
        b = check_scalar(stop, "stop", caller, low=a, high=self.horizon)
        log = self.fetch_log()
        m = len(self.pages)
        keep = log.time <= b
        page = np.concatenate([np.arange(m), log.page[keep]])
        t = np.concatenate([np.zeros(m), log.time[keep]])
        ver = np.concatenate([np.zeros(m, dtype=np.int64), log.version[keep]])
        order = np.lexsort((t, page))
        page, t, ver = page[order], t[order], ver[order]
        nxt = np.full(len(t), b)
        same = page[1:] == page[:-1]
        nxt[:-1][same] = t[1:][same]
        n_changes = np.diff(self._change_off)
        has_next = ver < n_changes[page]
        change_after = np.full(len(t), np.inf)
        change_after[has_next] = self._change_t[self._change_off[page[has_next]] + ver[has_next]]
        lo = np.maximum(t, a)
        hi = np.minimum(np.minimum(nxt, change_after), b)
        return np.bincount(page, weights=np.maximum(hi - lo, 0.0), minlength=m)

    def freshness(self, start: float, stop: float, *, weighted: bool = False) -> float:
        """Time-average fraction of fresh pages over ``[start, stop]`` (``start < stop``).

        Parameters
        ----------
        start, stop : float
            The window (:meth:`fresh_time`), ``start < stop``.
        weighted : bool, default=False
            Weight pages by their importance ``mu`` (the fraction of requests that find a fresh copy);
            unweighted when every ``mu`` is 0.

        Returns
        -------
        freshness : float
            In ``[0, 1]``.
        """
        fresh = self.fresh_time(start, stop)
        span = float(stop) - float(start)
        if span <= 0:
            raise ValueError(f"LocalWeb.freshness: the window must have start < stop. Got [{start}, {stop}].")
        mu = self.pages.importance
        if weighted and mu.sum() > 0:
            return float(np.dot(mu, fresh) / mu.sum() / span)
        return float(fresh.mean() / span) if len(fresh) else 0.0

    # ---- HTTP ---------------------------------------------------------------------------------------------
    def _sitemap(self, path: str, t: float) -> bytes | None:
        """The sitemap document at ``path`` at virtual time ``t``, or None for an unknown path."""
        m = len(self.pages)
        lm = self._posix(self.lastmod(t))
        if path == "/sitemap.xml" and self._groups == 1:
            return sitemap_xml([self.page_url(i) for i in range(m)], lm)
        if path == "/sitemap.xml":
            latest = [float(lm[b].max()) if len(b) else math.nan for b in self._blocks]
            return sitemap_xml([f"{self._url}/sitemap-{g}.xml" for g in range(self._groups)], latest, index=True)
        found = _GROUP_PATH.fullmatch(path)
        if found is None or self._groups == 1 or int(found.group(1)) >= self._groups:
            return None
        block = self._blocks[int(found.group(1))]
        return sitemap_xml([self.page_url(int(i)) for i in block], lm[block])

    def _respond(self, path: str) -> tuple[int, str, bytes]:
        t = self.clock.now()
        found = _PAGE_PATH.fullmatch(path)
        if found is not None:
            page = int(found.group(1))
            if page >= len(self.pages):
                return 404, "text/plain", b"no such page\n"
            v = self.version(page, t)  # (no changes after the horizon)
            with self._lock:
                self._fetch_page.append(page)
                self._fetch_time.append(t)
                self._fetch_version.append(v)
            body = (f"<html><head><title>page {page}</title></head>"
                    f"<body><p>page {page} version {v}</p></body></html>\n")
            return 200, "text/html; charset=utf-8", body.encode()
        if path == "/clock":
            doc = {"time": t, "speed": self.clock.speed, "epoch": self.epoch, "time_unit": self.time_unit}
            return 200, "application/json", json.dumps(doc).encode()
        doc_bytes = self._sitemap(path, min(t, self.horizon))
        if doc_bytes is None:
            return 404, "text/plain", b"not found\n"
        with self._lock:
            self._sitemap_reads.append((t, path))
        return 200, "application/xml", doc_bytes

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        web = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self) -> None:  # the name http.server calls
                status, ctype, body = web._respond(urlsplit(self.path).path)
                head = (f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n"
                        f"Content-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n")
                self.wfile.write(head.encode("latin-1") + body)  # one write: no Nagle/delayed-ACK stall

            def log_message(self, format: str, *args: Any) -> None:
                pass

        return Handler


class CrawlReport(NamedTuple):
    """What :func:`run_crawler` did.

    Attributes
    ----------
    pages : ndarray of int64
        The page fetched at each tick.
    due : ndarray of float64
        Virtual time each fetch was due (the policy's tick time ``j/R``).
    late : ndarray of float64
        Virtual time by which each fetch request went out after it was due (``>= 0`` up to clock
        resolution).
    poll_times : ndarray of float64
        Virtual time each sitemap poll was due (the first, at 0, only sets the baseline).
    poll_late : ndarray of float64
        Lateness of each poll, as ``late``.
    n_moved : int
        Moved observations over all polls (``lastmod`` moves seen, after collapsing).
    n_observed : int
        Page observations over all polls (moved or not).
    n_signals : int
        Signals given to a policy fed by ``signal_many`` (the moved observations that ``feed`` kept).
    errors : int
        Requests that failed or were not answered 200.
    wall_seconds : float
        Wall time of the loop.
    """

    pages: np.ndarray
    due: np.ndarray
    late: np.ndarray
    poll_times: np.ndarray
    poll_late: np.ndarray
    n_moved: int
    n_observed: int
    n_signals: int
    errors: int
    wall_seconds: float

    @property
    def n_fetches(self) -> int:
        """Number of fetches."""
        return len(self.pages)

    @property
    def n_polls(self) -> int:
        """Number of sitemap polls (the baseline read at time 0 included)."""
        return len(self.poll_times)


class _Client:
    """One keep-alive HTTP connection to a host, reopened once on a dropped connection."""

    def __init__(self, base_url: str, timeout: float) -> None:
        u = urlsplit(base_url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError(f"run_crawler: the base URL must be http://host[:port]. Got {base_url!r}.")
        self.netloc = u.netloc
        self._host, self._port, self._timeout = u.hostname, u.port or 80, timeout
        self._conn: http.client.HTTPConnection | None = None

    def get(self, path: str) -> tuple[int, bytes]:
        for attempt in (0, 1):
            if self._conn is None:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=self._timeout)
            try:
                self._conn.request("GET", path)
                r = self._conn.getresponse()
                return r.status, r.read()
            except (http.client.HTTPException, ConnectionError, TimeoutError, OSError):
                self.close()
                if attempt:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


def _path_of(url: str, netloc: str) -> str:
    u = urlsplit(url)
    if u.netloc != netloc:
        raise ValueError(f"run_crawler: {url!r} is not on the crawled host {netloc!r}.")
    return u.path + (f"?{u.query}" if u.query else "")


class _SitemapReader:
    """Reads a site's sitemap (an urlset, or an index whose changed children it re-reads) as one snapshot."""

    def __init__(self, client: _Client, path: str) -> None:
        self._client, self._path = client, path
        self._children: dict[str, tuple[float, Sitemap]] = {}

    def read(self) -> Sitemap | None:
        status, body = self._client.get(self._path)
        if status != 200:
            return None
        top = parse_sitemap(body)
        if top.kind == "urlset":
            return top
        kids: list[Sitemap] = []
        for loc, lm in zip(top.locs, top.lastmod.tolist()):
            old = self._children.get(loc)
            if old is None or math.isnan(lm) or old[0] != lm:
                status, body = self._client.get(_path_of(loc, self._client.netloc))
                if status != 200:
                    return None
                old = (lm, parse_sitemap(body))
                self._children[loc] = old
            kids.append(old[1])
        return merge_sitemaps(kids)


def run_crawler(base_url: str, policy: CrawlPolicy, clock: VirtualClock, *, until: float,
                poll_interval: float | None = None, sitemap_path: str = "/sitemap.xml",
                page_ids: Mapping[str, int] | None = None, feed: str = "moved",
                timeout: float = 30.0) -> CrawlReport:
    """Crawl a site over HTTP for ``until`` units of virtual time, one fetch per tick of ``policy``.

    Parameters
    ----------
    base_url : str
        ``http://host:port`` of the site (e.g. :attr:`LocalWeb.url`).
    policy : CrawlPolicy
        New (``time == 0``); the fetch at its ``j``-th tick, due at ``j/R``, is ``policy.next()``.
    clock : VirtualClock
        The site's clock (started), for the due times.
    until : float
        Last virtual time of the loop: ticks and polls due in ``(0, until]`` are made.
    poll_interval : float, optional
        Poll the sitemap every ``poll_interval`` of virtual time, from time 0 (the read at 0 is the
        baseline).  Default: never (the policy crawls blind).
    sitemap_path : str, default="/sitemap.xml"
        Path of the sitemap or sitemap index on the site.
    page_ids : mapping of str to int, optional
        URL -> page id of the policy (default: ``{base_url}/page/<i>`` for ``i < policy.n_pages``, the
        layout of :class:`LocalWeb`); fetches go to the URL of the chosen id.
    feed : {"moved", "after-fetch"}, default="moved"
        What a policy without ``poll`` but with ``signal_many`` is told at a poll: one signal for every
        page whose ``lastmod`` moved since the previous poll (``"moved"``), or only for those whose new
        ``lastmod`` is later than the loop's last fetch of the page (``"after-fetch"``: a move the fetch
        already saw is not news; ``lastmod`` times are read on ``clock``'s epoch and time unit).
    timeout : float, default=30.0
        Socket timeout of the connection, seconds.

    Returns
    -------
    report : CrawlReport

    Raises
    ------
    ValueError
        If ``policy`` is not new, ``until`` or ``poll_interval`` is not a finite number > 0, or the
        policy's tick times are not ``j/R``.
    RuntimeError
        If the clock was not started.

    Notes
    -----
    At a poll the sitemap is compared with the previous read (:func:`freshcore.sitemaps.compare_sitemaps`);
    ``policy.poll(pages, t, moved)`` gets every observation if the policy has it, else
    ``policy.signal_many(moved pages, t)`` if it has that, else nothing; ``t`` is the poll's due time.
    A poll due at a tick's time comes first.  Each fetch is chosen before it is due, then sent when due:
    the policy's state changes only at polls, so the choice is the one it would make at the due time.
    A failed poll (not 200) is skipped (no observation) and counted in ``errors``.
    """
    caller = "run_crawler"
    if not isinstance(policy, CrawlPolicy):
        raise TypeError(f"The 'policy' parameter of {caller} must be a CrawlPolicy. Got {type(policy).__name__}.")
    if policy.time != 0.0:
        raise ValueError(f"The 'policy' parameter of {caller} must be new (time 0). Got time {policy.time}.")
    end = check_scalar(until, "until", caller, low=0.0, low_inclusive=False)
    w = None if poll_interval is None else check_scalar(poll_interval, "poll_interval", caller, low=0.0,
                                                         low_inclusive=False)
    if feed not in ("moved", "after-fetch"):
        raise ValueError(f"The 'feed' parameter of {caller} must be 'moved' or 'after-fetch'. Got {feed!r}.")
    if not clock.started:
        raise RuntimeError(f"{caller}: the clock is not started.")
    r = float(policy.bandwidth)
    ids = dict(page_ids) if page_ids is not None else {f"{base_url}/page/{i}": i for i in range(policy.n_pages)}
    client = _Client(base_url, timeout)
    path_of = {pid: _path_of(u, client.netloc) for u, pid in ids.items()}
    reader = _SitemapReader(client, sitemap_path)
    poll = getattr(policy, "poll", None)
    signal_many = getattr(policy, "signal_many", None)
    n_ticks = math.floor(end * r + 1e-9)
    pages = np.empty(n_ticks, dtype=np.int64)
    due = np.arange(1, n_ticks + 1) / r
    late = np.empty(n_ticks)
    poll_times: list[float] = []
    poll_late: list[float] = []
    n_moved = n_observed = n_signals = errors = 0
    last_fetch: dict[int, float] = {}  # virtual time each page's latest fetch went out (all held at 0)
    previous: Sitemap | None = None
    j = k = 0
    wall0 = time.perf_counter()
    try:
        while True:
            tp = k * w if w is not None and k * w <= end + 1e-12 else math.inf
            tt = float(due[j]) if j < n_ticks else math.inf
            if tp == math.inf and tt == math.inf:
                break
            if tp <= tt:
                clock.sleep_until(tp)
                poll_late.append(clock.now() - tp)
                poll_times.append(tp)
                k += 1
                snap = reader.read()
                if snap is None:
                    errors += 1
                    continue
                if previous is not None:
                    ch = compare_sitemaps(previous, snap, ids)
                    n_moved += int(ch.moved.sum())
                    n_observed += len(ch.pages)
                    if poll is not None:
                        poll(ch.pages, tp, ch.moved)
                    elif signal_many is not None and ch.moved.any():
                        mp = ch.pages[ch.moved]
                        if feed == "after-fetch":
                            fetched = clock.to_posix(np.array([last_fetch.get(int(q), 0.0) for q in mp]))
                            mp = mp[ch.lastmod[ch.moved] > fetched]
                        if len(mp):
                            signal_many(mp, np.full(len(mp), tp))
                            n_signals += len(mp)
                previous = snap
                continue
            page = int(policy.next())
            if abs(policy.time - tt) > 1e-9 * max(1.0, tt):
                raise ValueError(f"{caller}: the policy ticked at {policy.time}, not at j/R = {tt}; this loop needs "
                                 "evenly spaced ticks.")
            clock.sleep_until(tt)
            sent = clock.now()
            late[j] = sent - tt
            last_fetch[page] = sent
            pages[j] = page
            j += 1
            try:
                status, _ = client.get(path_of[page])
            except OSError:
                status = 0
            errors += status != 200
    finally:
        client.close()
    return CrawlReport(pages, due, late, np.array(poll_times), np.array(poll_late), n_moved, n_observed, n_signals,
                       errors, time.perf_counter() - wall0)


# ---- policies by name ------------------------------------------------------------------------------------

#: A policy factory: ``(pages, bandwidth, poll_interval) -> CrawlPolicy`` (``poll_interval`` None: no polls).
PolicyFactory = Callable[[PageModel, float, "float | None"], CrawlPolicy]


def _scheduler(value: str) -> PolicyFactory:
    def make(pages: PageModel, bandwidth: float, poll_interval: float | None) -> CrawlPolicy:
        from freshcore.schedule import Scheduler

        if value == "polled":  # the polled value needs the poll interval (none: inf, Greedy's value)
            w = math.inf if poll_interval is None else poll_interval
            return Scheduler(pages, bandwidth, value=value, poll_interval=w)
        return Scheduler(pages, bandwidth, value=value)

    return make


#: The policies :func:`crawl_local_web` and ``bench/crawl_testweb.py`` run, by name; add an entry to run
#: another.  ``"polled"`` is the Scheduler's polled value kind, which the loop feeds through its ``poll``.
POLICIES: dict[str, PolicyFactory] = {
    "round-robin": lambda pages, bandwidth, poll_interval: RoundRobin(len(pages), bandwidth),
    "greedy": _scheduler("greedy"),
    "exact": _scheduler("exact"),
    "polled": _scheduler("polled"),
}


@cites(BUSA_FEKETE_2025)
def make_policy(name: str, pages: PageModel, bandwidth: float, poll_interval: float | None = None) -> CrawlPolicy:
    """A new policy from :data:`POLICIES`.

    Parameters
    ----------
    name : str
        A key of :data:`POLICIES`: ``"round-robin"``, ``"greedy"`` (the Scheduler, signals ignored),
        ``"exact"`` (the Scheduler's exact value of Busa-Fekete et al. (2025), fed the polls as signals),
        ``"polled"`` (the Scheduler's value for polled signals, fed the polls; it models polls every
        ``poll_interval``), or one added there.
    pages : PageModel
        The pages (true parameters: the experiment gives the crawler the rates).
    bandwidth : float
        Fetches per unit of virtual time.
    poll_interval : float, optional
        The sitemap's poll interval, for a policy that needs it.

    Raises
    ------
    ValueError
        If ``name`` is not a key of :data:`POLICIES`.
    """
    factory = POLICIES.get(name)
    if factory is None:
        raise ValueError(f"The 'name' parameter of make_policy must be one of {sorted(POLICIES)}. Got {name!r}.")
    return factory(pages, bandwidth, poll_interval)


def synthetic_pages(n_pages: int, rng: Any = 0, web: str = "demo") -> PageModel:
    """Pages of a synthetic web, with noisy signals: the default web of :class:`LocalWeb` experiments.

    Parameters
    ----------
    n_pages : int
        Number of pages, ``>= 0``.
    rng : int seed or numpy.random.Generator, default=0
        Source of the draws.
    web : {"demo", "uniform"}, default="demo"
        ``"demo"``: the demo's synthetic web (:func:`freshcore.cli.demo.synthetic_web`): ``Delta``
        log-uniform on [0.02, 5] per day, ``mu_i = n w_i`` with ``w`` Pareto(1.5) + 1 normalised (one request
        per page per day on average).  ``"uniform"``: ``Delta, mu ~ U[0, 1]`` (SPEC section 3's check).
        Both with recall ``lambda ~ Beta(0.25, 0.25)`` and false moves ``nu ~ U(0.1, 0.6)`` per day
        (:func:`freshcore.cli.demo.synthetic_signals`).

    Returns
    -------
    pages : PageModel

    Examples
    --------
    >>> p = synthetic_pages(4, rng=1)
    >>> len(p), round(float(p.importance.sum()), 9)
    (4, 4.0)
    """
    from freshcore.cli.demo import synthetic_signals, synthetic_web

    n = check_int(n_pages, "n_pages", "synthetic_pages", low=0)
    gen = check_rng(rng, "synthetic_pages")
    if web == "demo":
        delta, w = synthetic_web(n, gen)
        mu = n * w
    elif web == "uniform":
        delta, mu = gen.uniform(0.0, 1.0, n), gen.uniform(0.0, 1.0, n)
    else:
        raise ValueError(f"The 'web' parameter of synthetic_pages must be 'demo' or 'uniform'. Got {web!r}.")
    recall, false_rate = synthetic_signals(n, gen)
    return PageModel(delta, mu, recall, false_rate)


class CrawlResult(NamedTuple):
    """One :func:`crawl_local_web` experiment.

    Attributes
    ----------
    policy : str
        The policy's name.
    freshness : float
        Time-average fraction of fresh pages over the measured window (server ground truth).
    accuracy : float
        The same, ``mu``-weighted (the fraction of requests served fresh).
    moves : int
        ``lastmod`` moves that happened in the polled span ``(0, last poll]``.
    changes : int
        Page changes in the same span.
    report : CrawlReport
        The loop's report (fetches, lateness, polls, moved observations, wall time).
    """

    policy: str
    freshness: float
    accuracy: float
    moves: int
    changes: int
    report: CrawlReport


def crawl_local_web(policy: str, pages: PageModel, *, bandwidth: float, burn_in: float, measure: float,
                    poll_interval: float | None = None, speed: float = 1.0, rng: Any = 0,
                    sitemap_groups: int = 1, feed: str = "moved") -> CrawlResult:
    """One experiment: a :class:`LocalWeb` of ``pages``, a policy from :data:`POLICIES`, the crawl loop.

    Parameters
    ----------
    policy : str
        A key of :data:`POLICIES`.
    pages : PageModel
        The web (and the policy's model of it).
    bandwidth : float
        Fetches per unit of virtual time.
    burn_in, measure : float
        The loop runs ``burn_in + measure``; freshness is measured over ``[burn_in, burn_in + measure]``.
    poll_interval : float, optional
        Sitemap poll interval (default: no polls).
    speed : float, default=1.0
        Virtual time per wall second.
    rng : int seed, default=0
        Seed of the web's events (the same seed gives every policy the same events).
    sitemap_groups : int, default=1
        See :class:`LocalWeb`.
    feed : {"moved", "after-fetch"}, default="moved"
        See :func:`run_crawler`.

    Returns
    -------
    result : CrawlResult
    """
    caller = "crawl_local_web"
    b = check_scalar(burn_in, "burn_in", caller, low=0.0)
    h = b + check_scalar(measure, "measure", caller, low=0.0, low_inclusive=False)
    pol = make_policy(policy, pages, bandwidth, poll_interval)
    with LocalWeb(pages, h, speed=speed, rng=rng, sitemap_groups=sitemap_groups) as web:
        report = run_crawler(web.url, pol, web.clock, until=h, poll_interval=poll_interval, feed=feed)
    last_poll = float(report.poll_times[-1]) if report.n_polls else 0.0
    return CrawlResult(policy, web.freshness(b, h), web.freshness(b, h, weighted=True),
                       web.moves_between(0.0, last_poll), web.changes_between(0.0, last_poll), report)
