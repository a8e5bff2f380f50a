"""Scheduler.poll's lastmod: accepted and not used, but checked (a wrong one is not silent) and nothing recorded."""

import numpy as np
import pytest
from test_schedule_polled import assert_same_state

from freshcore import PageModel, Scheduler


def _sched():
    s = Scheduler(PageModel([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], recall=0.5, false_rate=0.2), 1.0, value="polled",
                  poll_interval=1.0)
    s.run(2)
    return s


def test_lastmod_is_accepted_and_does_not_change_the_decisions():
    a, b = _sched(), _sched()
    a.poll([0, 1, 2], 2.5, [True, False, True], lastmod=[2.25, np.nan, 1.5])
    b.poll([0, 1, 2], 2.5, [True, False, True])
    a.poll(np.array([1]), 2.75, np.array([True]), lastmod=np.array([2.7]))
    b.poll(np.array([1]), 2.75, np.array([True]))
    a.poll(2, 2.8, False, lastmod=np.nan)
    b.poll(2, 2.8, False)
    assert a.run(20).tolist() == b.run(20).tolist()


@pytest.mark.parametrize(("lastmod", "error", "match"), [
    (["soon", "later"], TypeError, "'lastmod' parameter of Scheduler.poll must hold times"),
    ([1.0], ValueError, r"'lastmod' parameter of Scheduler.poll must have one time per page \(2\)"),
    ([[1.0, 2.0]], ValueError, "one time per page"),
])
def test_bad_lastmod_records_nothing(lastmod, error, match):
    s, ref = _sched(), _sched()
    with pytest.raises(error, match=match):
        s.poll(np.array([0, 1]), 2.5, np.array([True, True]), lastmod=lastmod)
    assert_same_state(s.to_dict(), ref.to_dict())
