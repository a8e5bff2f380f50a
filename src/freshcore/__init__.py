"""freshcore: keep a crawler's copy of the web fresh.

Change-rate estimation (paper 000/003), optimal crawl rates under a bandwidth
budget, and the special functions behind them, with a compiled Cython core.

Estimation
    :class:`NaiveEstimator`, :class:`LLNEstimator`, :class:`SAEstimator`,
    :class:`SAMEstimator` (streaming, one page); :class:`NaiveBatch`,
    :class:`LLNBatch`, :class:`SABatch`, :class:`SAMBatch` (state over arrays of
    pages); :func:`estimate_rates` (a whole log at once); :func:`mle_rates`,
    :func:`moment_rates`, :func:`cgm_rates` (offline); :class:`IntervalMLEEstimator`
    and :class:`IntervalMLEBatch` (streaming MLE from the actual crawl intervals).
Crawl rates
    :func:`optimal_rates`, :func:`freshness`.
Special functions
    :func:`lambertw`.
Crawl value with change-indicating signals (001)
    :class:`PageModel`, :func:`residual_exp`, :func:`crawl_value`,
    :func:`crawl_frequency`, :func:`crawl_interval`, :func:`fresh_time`,
    :func:`optimal_thresholds`.
Scheduling (001 Algorithm 1)
    :class:`Scheduler` (exact argmax at a constant crawl rate);
    :class:`ShardedScheduler` (k schedulers at R/k merged into one stream, 001 Section 5.2).
Baselines and the simulator that judges policies
    :class:`LowDiscrepancy`, :class:`RoundRobin`, :class:`UniformRandom`,
    :class:`NutchAdaptive`; :func:`simulate`, :class:`SimulationResult`.
Change-indicating signals
    :func:`fit_signal_model` (Appendix E of 001), :func:`naive_signal_model`,
    :func:`simulate_signal_log`.
Simulation
    :func:`simulate_crawls`.
Threads
    :func:`set_num_threads`, :func:`get_num_threads` (large full batch updates).
"""

__version__ = "0.1.0.dev0"

from .estimation import (
    LLNBatch,
    LLNEstimator,
    NaiveBatch,
    NaiveEstimator,
    SABatch,
    SAEstimator,
    SAMBatch,
    SAMEstimator,
    estimate_rates,
)
from ._parallel import get_num_threads, set_num_threads
from .mle import (
    ClippedEstimateWarning,
    IntervalMLEBatch,
    IntervalMLEEstimator,
    cgm_rates,
    mle_rates,
    moment_rates,
)
from .policies import LowDiscrepancy, NutchAdaptive, RoundRobin, UniformRandom
from .rates import RatesResult, freshness, optimal_rates
from .schedule import Scheduler
from .sharding import ShardedScheduler
from .signals import SignalModelFit, fit_signal_model, naive_signal_model, simulate_signal_log
from .simulation import simulate_crawls
from .simulator import SimulationResult, simulate
from .pages import PageModel
from .special import lambertw, residual_exp
from .thresholds import ThresholdsResult, optimal_thresholds
from .value import crawl_frequency, crawl_interval, crawl_value, fresh_time

__all__ = [
    "__version__",
    "NaiveEstimator",
    "LLNEstimator",
    "SAEstimator",
    "SAMEstimator",
    "NaiveBatch",
    "LLNBatch",
    "SABatch",
    "SAMBatch",
    "estimate_rates",
    "mle_rates",
    "moment_rates",
    "cgm_rates",
    "IntervalMLEEstimator",
    "IntervalMLEBatch",
    "ClippedEstimateWarning",
    "optimal_rates",
    "freshness",
    "RatesResult",
    "lambertw",
    "simulate_crawls",
    "fit_signal_model",
    "naive_signal_model",
    "simulate_signal_log",
    "SignalModelFit",
    "get_num_threads",
    "set_num_threads",
    "PageModel",
    "residual_exp",
    "crawl_value",
    "crawl_frequency",
    "crawl_interval",
    "fresh_time",
    "optimal_thresholds",
    "ThresholdsResult",
    "Scheduler",
    "ShardedScheduler",
    "LowDiscrepancy",
    "RoundRobin",
    "UniformRandom",
    "NutchAdaptive",
    "simulate",
    "SimulationResult",
]
