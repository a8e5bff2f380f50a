"""Threaded full batch updates give the same bits as one thread."""

import numpy as np
import pytest

import freshcore
from freshcore import LLNBatch, NaiveBatch, SABatch, SAMBatch
from freshcore._parallel import MIN_CHUNK, parallel_chunks

N = 3 * MIN_CHUNK + 12345  # three chunks of at least MIN_CHUNK pages, uneven


@pytest.fixture
def threads():
    old = freshcore.get_num_threads()
    yield freshcore.set_num_threads
    freshcore.set_num_threads(old)


@pytest.mark.parametrize(
    "make",
    [
        lambda: NaiveBatch(N, crawl_rate=2.0),
        lambda: LLNBatch(N, crawl_rate=2.0, alpha="log"),
        lambda: SABatch(N, crawl_rate=2.0),
        lambda: SAMBatch(N, crawl_rate=2.0),
        lambda: SAMBatch(N, crawl_rate=np.linspace(0.5, 3.0, N)),
    ],
    ids=["naive", "lln", "sa", "sam", "sam-per-page-rate"],
)
def test_threads_do_not_change_the_bits(make, threads):
    rng = np.random.default_rng(11)
    flags = [rng.random(N) < 0.3 for _ in range(3)]
    results = []
    for n_threads in (1, 3):
        threads(n_threads)
        b = make()
        for f in flags:
            b.update(f)
        b.update([1, 0, 1], pages=[5, N - 1, 5])  # a subset update in between (single-threaded path)
        b.update(flags[0])
        results.append(b.to_dict()["state"])
    for key in results[0]:
        np.testing.assert_array_equal(results[0][key], results[1][key], err_msg=key)


def test_parallel_chunks_cover_the_range_once(threads):
    threads(4)
    n = 4 * MIN_CHUNK + 7
    hits = np.zeros(n, dtype=np.int64)

    def mark(s, e):
        hits[s:e] += 1

    parallel_chunks(n, mark)
    assert (hits == 1).all()


def test_parallel_chunks_propagate_errors(threads):
    threads(2)

    def boom(s, e):
        if s > 0:
            raise RuntimeError("chunk failed")

    with pytest.raises(RuntimeError, match="chunk failed"):
        parallel_chunks(2 * MIN_CHUNK, boom)


def test_set_num_threads_validates(threads):
    with pytest.raises(ValueError, match="'n'"):
        freshcore.set_num_threads(0)
    with pytest.raises(TypeError, match="'n'"):
        freshcore.set_num_threads(2.0)
    assert threads(2) >= 1 and freshcore.get_num_threads() == 2
