"""Scheduler.tick_times: the next ticks' own times, and Scheduler.poll_interval."""

import numpy as np
import pytest

from freshcore import PageModel, Scheduler


@pytest.mark.parametrize("value", ["exact", "greedy", "polled"])
def test_tick_times_are_the_times_the_ticks_get(value):
    pages = PageModel(np.linspace(0.2, 3.0, 7), np.linspace(1.0, 2.0, 7), recall=0.5, false_rate=0.2)
    extra = {"poll_interval": 0.5} if value == "polled" else {}
    s = Scheduler(pages, 10.0, value=value, **extra)
    for rate in (10.0, 3.0, 7.0):  # a bandwidth change moves the origin of the ticks
        s.set_bandwidth(rate)
        ahead = s.tick_times(25)
        assert ahead.shape == (25,) and np.all(np.diff(ahead) > 0)
        got = []
        for _ in range(25):
            s.next()
            got.append(s.time)
        np.testing.assert_array_equal(ahead, got)  # bit for bit
    assert s.tick_times(0).shape == (0,)
    assert 0.7 + 0.1 < 0.8 and Scheduler(pages, 10.0).tick_times(8)[-1] == 0.8


def test_tick_times_bad_n():
    s = Scheduler(PageModel([1.0], [1.0]), 1.0)
    with pytest.raises(ValueError, match=r"'n' parameter of Scheduler\.tick_times"):
        s.tick_times(-1)
    with pytest.raises(TypeError, match=r"'n' parameter of Scheduler\.tick_times"):
        s.tick_times(1.5)


def test_poll_interval_property():
    pages = PageModel([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.2)
    assert Scheduler(pages, 1.0).poll_interval is None
    s = Scheduler(pages, 1.0, value="polled", poll_interval=[0.5, 1.0, np.inf])
    w = s.poll_interval
    np.testing.assert_array_equal(w, [0.5, 1.0, np.inf])
    w[0] = 9.0  # a copy
    assert s.poll_interval[0] == 0.5
    s.remove_pages([1])
    np.testing.assert_array_equal(s.poll_interval, [0.5, np.inf])
    s.update_pages([2], PageModel([1.0], [1.0], recall=0.5, false_rate=0.2), poll_interval=2.0)
    np.testing.assert_array_equal(s.poll_interval, [0.5, 2.0])
