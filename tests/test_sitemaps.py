"""freshcore.sitemaps: parsing sitemaps and sitemap indexes, W3C datetimes, and the moved flags of two reads."""

import datetime as dt
import gzip
import io
import math

import numpy as np
import pytest

from freshcore.sitemaps import (
    SITEMAP_NAMESPACE,
    Sitemap,
    compare_sitemaps,
    format_lastmod,
    merge_sitemaps,
    parse_lastmod,
    parse_sitemap,
    sitemap_xml,
)


def _posix(*args, tz=dt.timezone.utc):
    return dt.datetime(*args, tzinfo=tz).timestamp()


def _urlset(entries, ns=SITEMAP_NAMESPACE, extra_ns=""):
    xmlns = f' xmlns="{ns}"' if ns else ""
    body = "".join(
        f"<url><loc>{loc}</loc>{'' if lm is None else f'<lastmod>{lm}</lastmod>'}</url>" for loc, lm in entries
    )
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset{xmlns}{extra_ns}>{body}</urlset>'


# ---- W3C datetimes ------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("1997", _posix(1997, 1, 1)),
    ("1997-07", _posix(1997, 7, 1)),
    ("1997-07-16", _posix(1997, 7, 16)),
    ("1997-07-16T19:20+01:00", _posix(1997, 7, 16, 18, 20)),
    ("1997-07-16T19:20:30+01:00", _posix(1997, 7, 16, 18, 20, 30)),
    ("1997-07-16T19:20:30.45+01:00", _posix(1997, 7, 16, 18, 20, 30) + 0.45),
    ("1997-07-16T19:20:30Z", _posix(1997, 7, 16, 19, 20, 30)),
    ("1997-07-16T19:20:30-05:30", _posix(1997, 7, 17, 0, 50, 30)),
    ("2004-12-23T18:00:15+00:00", _posix(2004, 12, 23, 18, 0, 15)),
    ("  2005-01-01\n", _posix(2005, 1, 1)),
    ("2005-01-01T10:00:00", _posix(2005, 1, 1, 10)),  # no time zone: UTC (common in the wild)
    ("2024-02-29T23:59:59.999999Z", _posix(2024, 2, 29, 23, 59, 59) + 0.999999),
    ("1969-12-31T23:59:59Z", -1.0),
])
def test_parse_lastmod_forms(text, expected):
    assert parse_lastmod(text) == pytest.approx(expected, abs=1e-6)


def test_parse_lastmod_fraction_digits_beyond_microseconds():
    assert parse_lastmod("1970-01-01T00:00:00.1234567891Z") == pytest.approx(0.1234567891, abs=1e-12)


@pytest.mark.parametrize("text", [
    "", "97", "1997-7-16", "1997-13-01", "1997-02-30", "1997-07-16T24:00Z",
    "1997-07-16T19:61Z", "1997-07-16T19:20:60Z", "1997-07-16 19:20:30Z", "1997-07-16T19Z",
    "1997-07-16T19:20:30+0100", "1997-07-16T19:20:30+25:00", "1997-07-16T19:20:30+01:60", "0000-01-01",
    "yesterday", "1997-07-16T19:20:30.Z",
])
def test_parse_lastmod_bad(text):
    with pytest.raises(ValueError, match="Bad lastmod"):
        parse_lastmod(text)


def test_parse_lastmod_type():
    with pytest.raises(TypeError, match="string"):
        parse_lastmod(1997)


def test_format_lastmod_round_trip():
    rng = np.random.default_rng(3)
    t = rng.uniform(-1e9, 4e9, 200)
    for digits in range(7):
        text = format_lastmod(t, digits=digits)
        back = np.array([parse_lastmod(s) for s in text])
        step = 10.0**-digits
        # truncated, never later than the time it formats
        assert np.all(back <= t + 1e-6) and np.all(t - back < step + 1e-6), digits
    assert format_lastmod(0.0) == "1970-01-01T00:00:00Z"
    assert format_lastmod(1.5, digits=3) == "1970-01-01T00:00:01.500Z"


def test_format_lastmod_bad():
    with pytest.raises(ValueError, match="index 1"):
        format_lastmod([0.0, math.nan])
    with pytest.raises(ValueError, match="digits"):
        format_lastmod(0.0, digits=7)


# ---- parsing documents --------------------------------------------------------------------------------------

def test_parse_urlset_namespaces_and_extensions():
    doc = f"""<?xml version="1.0" encoding="UTF-8"?>
    <urlset xmlns="{SITEMAP_NAMESPACE}" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"
            xmlns:xhtml="http://www.w3.org/1999/xhtml">
      <url>
        <loc> https://a.example/p?x=1&amp;y=2 </loc>
        <lastmod>2026-01-02</lastmod><changefreq>daily</changefreq><priority>0.8</priority>
        <image:image><image:loc>https://a.example/img.png</image:loc></image:image>
        <xhtml:link rel="alternate" hreflang="de" href="https://a.example/de/p"/>
      </url>
      <url><loc>https://a.example/q</loc></url>
    </urlset>"""
    sm = parse_sitemap(doc)
    assert sm.kind == "urlset"
    assert sm.locs == ("https://a.example/p?x=1&y=2", "https://a.example/q")
    assert sm.lastmod[0] == _posix(2026, 1, 2) and math.isnan(sm.lastmod[1])
    assert sm.lastmod.dtype == np.float64


@pytest.mark.parametrize("ns", ["", SITEMAP_NAMESPACE, "http://www.google.com/schemas/sitemap/0.84"])
def test_parse_any_root_namespace(ns):
    sm = parse_sitemap(_urlset([("u", "2001"), ("v", None)], ns=ns))
    assert sm.locs == ("u", "v")
    assert sm.lastmod[0] == _posix(2001, 1, 1)


def test_entries_of_another_namespace_are_ignored():
    doc = (f'<urlset xmlns="{SITEMAP_NAMESPACE}" xmlns:x="urn:x"><x:url><x:loc>no</x:loc></x:url>'
           "<url><loc>yes</loc></url></urlset>")
    assert parse_sitemap(doc).locs == ("yes",)


def test_parse_index():
    doc = f"""<sitemapindex xmlns="{SITEMAP_NAMESPACE}">
      <sitemap><loc>https://a.example/s1.xml</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
      <sitemap><loc>https://a.example/s2.xml.gz</loc><lastmod>2005-01-01</lastmod></sitemap>
    </sitemapindex>"""
    sm = parse_sitemap(doc)
    assert sm.kind == "sitemapindex"
    assert sm.locs == ("https://a.example/s1.xml", "https://a.example/s2.xml.gz")
    np.testing.assert_array_equal(sm.lastmod, [_posix(2004, 10, 1, 18, 23, 17), _posix(2005, 1, 1)])


def test_parse_sources(tmp_path):
    doc = _urlset([("u", "2001-02-03T04:05:06Z")])
    expected = parse_sitemap(doc)
    path = tmp_path / "sitemap.xml"
    path.write_text(doc)
    gz = tmp_path / "sitemap.xml.gz"
    gz.write_bytes(gzip.compress(doc.encode()))
    for source in (doc.encode(), bytearray(doc.encode()), path, gz, io.BytesIO(doc.encode()), io.StringIO(doc),
                   gzip.compress(doc.encode())):
        got = parse_sitemap(source)
        assert got.locs == expected.locs and np.array_equal(got.lastmod, expected.lastmod), type(source)
    assert parse_sitemap(_urlset([])).locs == ()


@pytest.mark.parametrize(("doc", "match"), [
    ("<urlset><url><loc>u</loc></url>", "not well-formed XML at line 1"),
    ("", "not well-formed XML"),
    ("<html><body/></html>", "root element is <html>"),
    ("<urlset><url><lastmod>2001</lastmod></url></urlset>", "entry 0 has no <loc>"),
    ("<urlset><url><loc>a</loc></url><url><loc>  </loc></url></urlset>", "entry 1 has an empty <loc>"),
    ("<sitemapindex><sitemap><loc/></sitemap></sitemapindex>", "<sitemap> entry 0 has an empty <loc>"),
    ("<urlset><url><loc>a</loc></url><url><loc>b</loc><lastmod>2001-02-30</lastmod></url></urlset>",
     r"entry 1 \(b\): Bad lastmod '2001-02-30'"),
    ("<urlset><url><loc>a</loc><lastmod>soon</lastmod></url></urlset>", "entry 0 .a.: Bad lastmod 'soon'"),
    ('<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">]><urlset><url><loc>&lol;</loc></url></urlset>',
     "DTD"),
])
def test_parse_bad(doc, match):
    with pytest.raises(ValueError, match=match):
        parse_sitemap(doc)


def test_parse_bad_sources():
    with pytest.raises(TypeError, match="source"):
        parse_sitemap(3)
    with pytest.raises(ValueError, match="max_bytes"):
        parse_sitemap(_urlset([("u", None)]), max_bytes=10)
    with pytest.raises(ValueError, match="max_bytes"):
        parse_sitemap(gzip.compress(_urlset([("u", None)] * 100).encode()), max_bytes=200)
    with pytest.raises(ValueError, match="gzip"):
        parse_sitemap(b"\x1f\x8b\x08\x00garbage")
    with pytest.raises(ValueError, match="max_bytes"):
        parse_sitemap("<urlset/>", max_bytes=0)


def test_sitemap_xml_round_trip():
    locs = [f"https://a.example/p/{i}?a=<&>" for i in range(5)]
    lm = np.array([0.0, 1.5e9, np.nan, 1.7e9 + 0.25, -86400.0])
    sm = parse_sitemap(sitemap_xml(locs, lm, digits=2))
    assert sm.locs == tuple(locs)
    np.testing.assert_array_equal(sm.lastmod, lm)
    idx = parse_sitemap(sitemap_xml(locs[:2], index=True))
    assert idx.kind == "sitemapindex" and np.isnan(idx.lastmod).all()
    with pytest.raises(ValueError, match="2 locs but 3"):
        sitemap_xml(locs[:2], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="index 1"):
        sitemap_xml(locs[:2], [0.0, np.inf])


# ---- two reads into poll observations ------------------------------------------------------------------------

def test_compare_sitemaps_moved_flags():
    before = parse_sitemap(_urlset([("a", "2001"), ("b", "2001"), ("c", None), ("d", "2001"), ("gone", "2001"),
                                    ("e", "2002")]))
    after = parse_sitemap(_urlset([("e", "2001"), ("new", "2003"), ("d", None), ("c", "2003"), ("b", "2001-01-01"),
                                   ("a", "2001-06"), ("x", "2003")]))
    ids = {"a": 10, "b": 11, "c": 12, "d": 13, "e": 14, "new": 15, "gone": 16}
    ch = compare_sitemaps(before, after, ids)
    assert ch.urls == ("e", "d", "c", "b", "a")
    assert ch.pages.dtype == np.int64 and ch.pages.tolist() == [14, 13, 12, 11, 10]
    # e moved back in time (still a move); d and c lack a lastmod in one read (no information); b the same instant
    assert ch.moved.tolist() == [True, False, False, False, True]
    np.testing.assert_array_equal(ch.lastmod, [_posix(2001, 1, 1), np.nan, _posix(2003, 1, 1), _posix(2001, 1, 1),
                                               _posix(2001, 6, 1)])
    assert ch.added == ("new",) and ch.removed == ("gone",) and ch.unknown == ("x",)
    plain = compare_sitemaps(before, after)
    assert plain.pages.tolist() == [0, 2, 3, 4, 5] and plain.unknown == ()
    assert plain.moved.tolist() == ch.moved.tolist()


def test_compare_duplicates_take_latest_lastmod():
    before = parse_sitemap(_urlset([("a", "2001"), ("a", "2002")]))
    after = parse_sitemap(_urlset([("a", "2002"), ("a", None)]))
    ch = compare_sitemaps(before, after)
    assert ch.urls == ("a",) and ch.moved.tolist() == [False] and ch.pages.tolist() == [0]


def test_compare_against_brute_force():
    """Random reads: moved iff both lastmods exist and differ."""
    rng = np.random.default_rng(7)
    urls = [f"https://a.example/{i}" for i in range(300)]
    t0 = rng.integers(0, 4, 300).astype(float) * 86400
    t1 = t0 + rng.integers(0, 2, 300) * 60.0
    t0[rng.random(300) < 0.1] = np.nan
    t1[rng.random(300) < 0.1] = np.nan
    keep0 = rng.random(300) < 0.9
    keep1 = rng.random(300) < 0.9
    before = parse_sitemap(sitemap_xml([u for u, k in zip(urls, keep0) if k], t0[keep0]))
    after = parse_sitemap(sitemap_xml([u for u, k in zip(urls, keep1) if k], t1[keep1]))
    ids = {u: 1000 - i for i, u in enumerate(urls)}
    ch = compare_sitemaps(before, after, ids)
    both = np.flatnonzero(keep0 & keep1)
    assert ch.pages.tolist() == [1000 - i for i in both]
    assert ch.moved.tolist() == [bool(t0[i] != t1[i] and not np.isnan(t0[i]) and not np.isnan(t1[i])) for i in both]


def test_compare_bad():
    sm = parse_sitemap(_urlset([("a", "2001"), ("b", "2001")]))
    idx = parse_sitemap(sitemap_xml(["s"], index=True))
    with pytest.raises(TypeError, match="'before'"):
        compare_sitemaps("<urlset/>", sm)
    with pytest.raises(ValueError, match=r"'after'.*<urlset>.*<sitemapindex>"):
        compare_sitemaps(sm, idx)
    with pytest.raises(ValueError, match="page id 3"):
        compare_sitemaps(sm, sm, {"a": 3, "b": 3})
    with pytest.raises(ValueError, match=">= 0"):
        compare_sitemaps(sm, sm, {"a": -1})
    with pytest.raises(TypeError, match="integer ids"):
        compare_sitemaps(sm, sm, {"a": 1.0})
    with pytest.raises(TypeError, match="integer ids"):
        compare_sitemaps(sm, sm, {"a": True})


def test_merge_sitemaps():
    a = parse_sitemap(_urlset([("u", "2001"), ("v", None)]))
    b = parse_sitemap(_urlset([("w", "2000"), ("u", "2000"), ("v", "1999")]))
    m = merge_sitemaps([a, b])
    assert isinstance(m, Sitemap) and m.kind == "urlset"
    assert m.locs == ("u", "v", "w")
    np.testing.assert_array_equal(m.lastmod, [_posix(2001, 1, 1), _posix(1999, 1, 1), _posix(2000, 1, 1)])
    assert merge_sitemaps([]).locs == ()
    with pytest.raises(ValueError, match=r"sitemaps\[1\]"):
        merge_sitemaps([a, parse_sitemap(sitemap_xml(["s"], index=True))])


def test_document_lastmods_equal_parse_lastmod():
    """parse_sitemap converts all lastmods at once; each equals parse_lastmod of its text."""
    rng = np.random.default_rng(11)
    texts = []
    for _ in range(400):
        t = dt.datetime(1900, 1, 1) + dt.timedelta(seconds=int(rng.integers(0, 200 * 365 * 86400)))
        form = int(rng.integers(0, 8))
        tz = ["Z", "+00:00", "-05:30", "+13:45", ""][int(rng.integers(0, 5))]
        texts.append([
            f"{t:%Y}", f"{t:%Y-%m}", f"{t:%Y-%m-%d}", f"{t:%Y-%m-%dT%H:%M}{tz}", f"{t:%Y-%m-%dT%H:%M:%S}{tz}",
            f"{t:%Y-%m-%dT%H:%M:%S}.{int(rng.integers(0, 10**6)):06d}{tz}", f" {t:%Y-%m-%d}\n",
            f"{t:%Y-%m-%dT%H:%M:%S}.5{tz or 'Z'}",
        ][form])
    doc = "<urlset>" + "".join(f"<url><loc>u{k}</loc><lastmod>{x}</lastmod></url>" for k, x in enumerate(texts))
    sm = parse_sitemap(doc + "</urlset>")
    np.testing.assert_array_equal(sm.lastmod, [parse_lastmod(x) for x in texts])


def test_text_and_bytes_honour_the_declared_encoding():
    text = '<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>https://a.example/é</loc></url></urlset>'
    assert parse_sitemap(text).locs == ("https://a.example/é",)
    assert parse_sitemap(io.StringIO(text)).locs == ("https://a.example/é",)
    assert parse_sitemap(text.encode("latin-1")).locs == ("https://a.example/é",)
    with pytest.raises(ValueError, match="DTD"):
        parse_sitemap(io.StringIO('<!DOCTYPE x><urlset/>'))
