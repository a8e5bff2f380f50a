"""freshcore.testweb: the local test web's events and ground truth, its sitemaps, the crawl loop, clean shutdown."""

import http.client
import itertools
import math
import threading
import urllib.error
import urllib.request

import numpy as np
import pytest

from freshcore.pages import PageModel
from freshcore.policies import RoundRobin
from freshcore.sitemaps import compare_sitemaps, format_lastmod, merge_sitemaps, parse_lastmod, parse_sitemap
from freshcore.testweb import (
    POLICIES,
    LocalWeb,
    VirtualClock,
    crawl_local_web,
    make_policy,
    run_crawler,
    synthetic_pages,
)


def _get(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        with e:
            return e.code, e.read()


def _fresh_time_direct(web, start, stop):
    """Per page, fresh time in [start, stop] from the event lists alone: split the window at every change and
    fetch time and test freshness at each piece's midpoint (copy = version 0 at 0, then each fetch's)."""
    log = web.fetch_log()
    out = []
    for i, changes in enumerate(web.change_times):
        mine = log.page == i
        ft, fv = log.time[mine], log.version[mine]
        cuts = sorted({start, stop, *[c for c in changes if start < c < stop], *[f for f in ft if start < f < stop]})
        total = 0.0
        for lo, hi in itertools.pairwise(cuts):
            mid = 0.5 * (lo + hi)
            before = [k for k in range(len(ft)) if ft[k] <= mid]
            held = fv[max(before, key=lambda k: ft[k])] if before else 0
            current = sum(1 for c in changes if c <= mid)
            total += (hi - lo) * (held == current)
        out.append(total)
    return np.array(out)


def test_events_follow_the_model():
    m, h = 40, 50.0
    rng = np.random.default_rng(5)
    pages = PageModel(rng.uniform(0.2, 2.0, m), 1.0, recall=np.r_[np.zeros(10), np.ones(10), np.full(20, 0.5)],
                      false_rate=np.r_[np.zeros(20), np.full(20, 0.3)])
    web = LocalWeb(pages, h, rng=3)
    for i in range(m):
        ch, mv = web.change_times[i], web.move_times[i]
        assert np.all(np.diff(ch) > 0) and np.all((ch > 0) & (ch <= h))
        assert np.all(np.diff(mv) > 0) and np.all((mv > 0) & (mv <= h))
        if i < 10:  # recall 0, no false moves: lastmod never moves
            assert len(mv) == 0
        elif i < 20:  # recall 1, no false moves: lastmod moves exactly at the changes
            np.testing.assert_array_equal(mv, ch)
        else:
            assert len(np.intersect1d(mv, ch)) <= len(ch)
    # counts: Poisson(Delta h) changes, the signalled half of them plus Poisson(0.3 h) false moves
    n_ch = sum(len(c) for c in web.change_times)
    expected = float(pages.change_rate.sum() * h)
    assert abs(n_ch - expected) < 4 * math.sqrt(expected)
    sig = sum(len(np.intersect1d(web.move_times[i], web.change_times[i])) for i in range(20, 40))
    n_sig = sum(len(web.change_times[i]) for i in range(20, 40))
    assert abs(sig - 0.5 * n_sig) < 4 * math.sqrt(0.25 * n_sig)
    false = sum(len(web.move_times[i]) for i in range(20, 40)) - sig
    assert abs(false - 20 * 0.3 * h) < 4 * math.sqrt(20 * 0.3 * h)
    # the same seed, the same events
    again = LocalWeb(pages, h, rng=3)
    assert all(np.array_equal(a, b) for a, b in zip(web.change_times, again.change_times))
    assert all(np.array_equal(a, b) for a, b in zip(web.move_times, again.move_times))
    assert web.moves_between(0, h) == sum(len(v) for v in web.move_times)
    assert web.changes_between(10, 20) == sum(int(((c > 10) & (c <= 20)).sum()) for c in web.change_times)


def test_ground_truth_against_direct_computation():
    pages = PageModel([3.0, 1.0, 0.3, 0.0, 5.0], [1.0, 2.0, 3.0, 4.0, 0.5], recall=0.5, false_rate=0.2)
    with LocalWeb(pages, horizon=8.0, speed=8.0, rng=11) as web:
        rng = np.random.default_rng(2)
        bodies = []
        for _ in range(25):
            web.clock.sleep_until(web.clock.now() + rng.exponential(0.1))
            page = int(rng.integers(0, 5))
            status, body = _get(web.page_url(page))
            assert status == 200
            bodies.append((page, body))
        assert _get(web.url + "/page/5")[0] == 404  # no such page: not a fetch
    log = web.fetch_log()
    assert log.page.tolist() == [p for p, _ in bodies]
    for (page, body), t, v in zip(bodies, log.time, log.version):
        assert v == int((web.change_times[page] <= t).sum())  # the version served is the one current then
        assert f"page {page} version {v}<".encode() in body
    stop = min(float(log.time.max()) + 0.05, web.horizon)
    for start in (0.0, 0.4, float(log.time[5])):
        direct = _fresh_time_direct(web, start, stop)
        np.testing.assert_allclose(web.fresh_time(start, stop), direct, rtol=0, atol=1e-12)
        span = stop - start
        assert web.freshness(start, stop) == pytest.approx(direct.mean() / span, abs=1e-12)
        mu = pages.importance
        assert web.freshness(start, stop, weighted=True) == pytest.approx(mu @ direct / mu.sum() / span, abs=1e-12)
    # before any fetch, a page is fresh until its first change
    assert web.fresh_time(0.0, 0.0).tolist() == [0.0] * 5
    never = [i for i in range(5) if i not in set(log.page.tolist())]
    for i in never:
        first = web.change_times[i][0] if len(web.change_times[i]) else math.inf
        assert web.fresh_time(0.0, stop)[i] == pytest.approx(min(first, stop), abs=1e-12)


def test_sitemap_round_trip():
    pages = synthetic_pages(30, rng=4)
    with LocalWeb(pages, horizon=20.0, speed=10.0, rng=4) as web:
        web.clock.sleep_until(0.5)
        first = parse_sitemap(_get(web.url + "/sitemap.xml")[1])
        web.clock.sleep_until(1.5)
        second = parse_sitemap(_get(web.url + "/sitemap.xml")[1])
        status, _ = _get(web.url + "/sitemap-0.xml")  # no group sitemaps with one group
        assert status == 404
        assert _get(web.url + "/nothing")[0] == 404
    (t1, p1), (t2, p2) = web.sitemap_reads()
    assert p1 == p2 == "/sitemap.xml"
    assert first.kind == "urlset" and first.locs == tuple(web.page_ids())
    for sm, t in ((first, t1), (second, t2)):
        expected = np.floor(web.epoch + web.lastmod(t) * web.time_unit)
        np.testing.assert_array_equal(sm.lastmod, expected)
        assert format_lastmod(sm.lastmod[0]) == format_lastmod(expected[0])
    ch = compare_sitemaps(first, second, web.page_ids())
    moved = np.array([bool(((mv > t1) & (mv <= t2)).any()) for mv in web.move_times])
    np.testing.assert_array_equal(ch.pages, np.arange(30))
    np.testing.assert_array_equal(ch.moved, moved)
    assert 0 < moved.sum() < 30
    assert parse_lastmod("2026-01-01T00:00:00Z") == web.epoch


def test_sitemap_index_of_groups():
    pages = synthetic_pages(10, rng=1)
    with LocalWeb(pages, horizon=5.0, speed=5.0, rng=1, sitemap_groups=3) as web:
        web.clock.sleep_until(2.0)
        index = parse_sitemap(_get(web.url + "/sitemap.xml")[1])
        kids = [parse_sitemap(_get(loc)[1]) for loc in index.locs]
        assert _get(web.url + "/sitemap-3.xml")[0] == 404
    t_index = web.sitemap_reads()[0][0]
    assert index.kind == "sitemapindex"
    assert index.locs == tuple(f"{web.url}/sitemap-{g}.xml" for g in range(3))
    assert [len(k.locs) for k in kids] == [4, 3, 3]
    merged = merge_sitemaps(kids)
    assert merged.locs == tuple(web.page_ids())
    lm_at_index = np.floor(web.epoch + web.lastmod(t_index) * web.time_unit)
    np.testing.assert_array_equal(index.lastmod, [lm_at_index[b].max() for b in (range(4), range(4, 7), range(7, 10))])


class _Recorder(RoundRobin):
    """Round robin that records what the crawl loop tells it."""

    def __init__(self, m, r, with_poll):
        super().__init__(m, r)
        self.calls = []
        if with_poll:
            self.poll = lambda pages, t, moved: self.calls.append(("poll", t, pages.copy(), moved.copy(), self.time))

    def signal_many(self, pages, times):
        self.calls.append(("signal_many", times.copy(), np.asarray(pages).copy(), None, self.time))
        return super().signal_many(pages, times)


@pytest.mark.parametrize("with_poll", [True, False])
def test_crawl_loop_feeds_the_polls(with_poll):
    m, r, w = 12, 8.0, 0.25
    pages = synthetic_pages(m, rng=2)
    policy = _Recorder(m, r, with_poll)
    with LocalWeb(pages, horizon=3.0, speed=15.0, rng=2, sitemap_groups=2) as web:
        rep = run_crawler(web.url, policy, web.clock, until=3.0, poll_interval=w)
    assert rep.errors == 0 and rep.n_fetches == 24 and rep.n_polls == 13
    np.testing.assert_array_equal(rep.pages, np.arange(24) % m)
    np.testing.assert_allclose(rep.due, np.arange(1, 25) / r)
    assert np.all(rep.late > -1e-9) and np.all(rep.poll_late > -1e-9)
    log = web.fetch_log()
    np.testing.assert_array_equal(log.page, rep.pages)
    assert np.all(log.time >= rep.due)
    polls = [c for c in policy.calls if c[0] == "poll"]
    signals = [c for c in policy.calls if c[0] == "signal_many"]
    if with_poll:
        assert not signals and len(polls) == 12
        for k, (_, t, pg, _, now) in enumerate(polls, start=1):
            assert t == k * w and now <= t  # every tick due by then is made, none after
            np.testing.assert_array_equal(pg, np.arange(m))
        assert sum(int(c[3].sum()) for c in polls) == rep.n_moved and rep.n_observed == 12 * m
    else:
        assert not polls and signals
        for _, times, pg, _, now in signals:
            assert len(pg) > 0 and np.all(times == times[0]) and now <= times[0]
        assert sum(len(c[2]) for c in signals) == rep.n_moved
    assert 0 < rep.n_moved <= web.moves_between(0.0, 3.0)


def test_polled_scheduler_beats_greedy_and_round_robin():
    """The same events, the same budget: R = m/5, 3 days of burn-in and 10 measured, sitemap polls every 0.3 day,
    accuracy from the server.  Issue 19's test-web acceptance, short version (bench/crawl_testweb.py is the long).

    Sizing (measured before writing this test, 10 webs of 200 pages, seeds 0-9): Greedy - round robin = 0.095 +-
    0.038 (sd), smallest 0.043; the Scheduler's polled value - Greedy = +0.030 +- 0.007 (sd), smallest +0.021
    (polls every 0.3 day; every day: +0.017 +- 0.008, smallest -0.002); this web (seed 0) +0.149 and +0.021,
    and repeats move each by < 0.001 (timing).
    """
    pages = synthetic_pages(200, rng=0)
    got = {name: crawl_local_web(name, pages, bandwidth=40.0, burn_in=3.0, measure=10.0, poll_interval=0.3,
                                 speed=10.0, rng=0) for name in ("round-robin", "greedy", "polled")}
    rr, greedy, polled = got["round-robin"], got["greedy"], got["polled"]
    assert greedy.accuracy > rr.accuracy + 0.03
    assert polled.accuracy > greedy.accuracy + 0.01
    for res in got.values():
        assert res.report.n_fetches == 520 and res.report.errors == 0
        assert 0 < res.report.n_moved <= res.moves and res.moves > 0 and res.changes > 0
        assert 0 < res.freshness < 1 and 0 < res.accuracy < 1
    assert polled.report.n_signals == 0  # the polled kind takes polls, not signals


def test_start_stop_leaves_no_thread_or_connection():
    before = set(threading.enumerate())
    web = LocalWeb(synthetic_pages(3), horizon=1.0, speed=1.0)
    assert not web.running and web.url == ""
    web.start()
    assert web.running
    conn = http.client.HTTPConnection("127.0.0.1", int(web.url.rsplit(":", 1)[1]), timeout=5)
    conn.request("GET", "/page/0")
    assert conn.getresponse().read().startswith(b"<html>")
    conn.request("GET", "/clock")  # the same keep-alive connection, left open
    assert b'"speed": 1.0' in conn.getresponse().read()
    assert len(set(threading.enumerate()) - before) >= 2  # the serving thread and the connection's
    web.stop()  # must not wait for the client to close its idle connection
    assert set(threading.enumerate()) == before
    assert not web.running
    web.stop()  # idempotent
    conn.close()
    with pytest.raises(RuntimeError, match="already started"):
        web.start()
    with pytest.raises(OSError):
        urllib.request.urlopen(web.page_url(0), timeout=2)
    assert web.fetch_log().page.tolist() == [0]  # the record outlives the server


def test_bad_input():
    pages = synthetic_pages(5)
    with pytest.raises(ValueError, match="'horizon'"):
        LocalWeb(pages, 0.0)
    with pytest.raises(ValueError, match="'speed'"):
        LocalWeb(pages, 1.0, speed=-1.0)
    with pytest.raises(ValueError, match="'sitemap_groups'"):
        LocalWeb(pages, 1.0, sitemap_groups=6)
    with pytest.raises(TypeError, match="'pages'"):
        LocalWeb([1.0, 2.0], 1.0)
    web = LocalWeb(pages, 2.0)
    with pytest.raises(ValueError, match="'stop'"):
        web.fresh_time(0.0, 3.0)
    with pytest.raises(ValueError, match="'stop'"):
        web.fresh_time(1.0, 0.5)
    with pytest.raises(ValueError, match="start < stop"):
        web.freshness(1.0, 1.0)
    with pytest.raises(ValueError, match=r"'name'.*round-robin"):
        make_policy("nutch", pages, 1.0)
    with pytest.raises(RuntimeError, match="not started"):
        VirtualClock(1.0).now()
    with pytest.raises(RuntimeError, match="not started"):
        run_crawler("http://127.0.0.1:9", RoundRobin(5, 1.0), VirtualClock(1.0), until=1.0)
    clock = VirtualClock(100.0)
    clock.start()
    used = RoundRobin(5, 1.0)
    used.next()
    with pytest.raises(ValueError, match="must be new"):
        run_crawler("http://127.0.0.1:9", used, clock, until=1.0)
    with pytest.raises(ValueError, match="'poll_interval'"):
        run_crawler("http://127.0.0.1:9", RoundRobin(5, 1.0), clock, until=1.0, poll_interval=0.0)
    with pytest.raises(ValueError, match="'feed'"):
        run_crawler("http://127.0.0.1:9", RoundRobin(5, 1.0), clock, until=1.0, feed="all")
    with pytest.raises(ValueError, match="'until'"):
        run_crawler("http://127.0.0.1:9", RoundRobin(5, 1.0), clock, until=math.nan)
    with pytest.raises(TypeError, match="CrawlPolicy"):
        run_crawler("http://127.0.0.1:9", object(), clock, until=1.0)
    with pytest.raises(ValueError, match="base URL"):
        run_crawler("ftp://x", RoundRobin(5, 1.0), clock, until=1.0)
    with pytest.raises(ValueError, match="'web'"):
        synthetic_pages(3, web="real")
    assert set(POLICIES) >= {"round-robin", "greedy", "exact", "polled"}


def test_feed_after_fetch_signals_only_news():
    """feed="after-fetch": a moved page is signalled iff its new lastmod is later than the loop's last fetch of it,
    recomputed here from the server's events, its sitemap read times and the report's send times."""
    m, r, w = 10, 10.0, 0.3
    pages = PageModel(np.linspace(0.5, 3.0, m), 1.0, recall=0.8, false_rate=0.5)
    policy = _Recorder(m, r, with_poll=False)
    with LocalWeb(pages, horizon=3.0, speed=15.0, rng=9) as web:
        rep = run_crawler(web.url, policy, web.clock, until=3.0, poll_interval=w, feed="after-fetch")
    reads = [t for t, _ in web.sitemap_reads()]
    assert len(reads) == rep.n_polls == 11
    sent = rep.due + rep.late
    lastmod = [np.floor(web.clock.to_posix(web.lastmod(t))) for t in reads]
    expected = []
    for k in range(1, len(reads)):
        tp = rep.poll_times[k]
        moved = lastmod[k] != lastmod[k - 1]
        last = np.zeros(m)
        for j in np.flatnonzero(rep.due < tp):
            last[rep.pages[j]] = sent[j]
        news = np.flatnonzero(moved & (lastmod[k] > web.clock.to_posix(last)))
        if len(news):
            expected.append((tp, news.tolist()))
    got = [(float(c[1][0]), sorted(c[2].tolist())) for c in policy.calls]
    assert got == expected
    assert rep.n_signals == sum(len(p) for _, p in expected) < rep.n_moved
