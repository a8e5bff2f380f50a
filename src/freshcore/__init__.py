"""freshcore: keep a crawler's copy of the web fresh.

Change-rate estimation (Avrachenkov, Patil and Thoppe (2022)), optimal crawl rates
under a bandwidth budget (Avrachenkov et al. (2020)), crawl values and scheduling
with change-indicating signals (Busa-Fekete, Zimmert, György et al. (2025)), and
the special functions behind them, with a compiled Cython core.

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
Crawl value with change-indicating signals (Busa-Fekete et al. (2025))
    :class:`PageModel`, :func:`residual_exp`, :func:`crawl_value`,
    :func:`crawl_frequency`, :func:`crawl_interval`, :func:`fresh_time`,
    :func:`optimal_thresholds`.
Scheduling (Algorithm 1 of Busa-Fekete et al. (2025))
    :class:`Scheduler` (exact argmax at a constant crawl rate);
    :class:`ShardedScheduler` (k schedulers at R/k merged into one stream, their Section 5.2).
Baselines and the simulator that judges policies
    :class:`CrawlPolicy` (what every policy offers), :class:`LowDiscrepancy`, :class:`RoundRobin`,
    :class:`UniformRandom`, :class:`NutchAdaptive`; :func:`simulate`, :class:`SimulationResult`,
    :class:`PollSchedule` (signals seen only through polls of a sitemap or feed).
Change-indicating signals
    :func:`fit_signal_model` (Appendix E of Busa-Fekete et al. (2025)), :func:`naive_signal_model`,
    :func:`simulate_signal_log`.
Polled signals (sitemaps and feeds)
    :mod:`freshcore.polled_signals` (the posterior per poll window, delays included, and the crawl value
    under polls), :mod:`freshcore.sitemaps` (read sitemaps; two reads give the polls' observations),
    :mod:`freshcore.testweb` (a local web with noisy sitemaps and exact ground truth, to try a crawler on).
Simulation
    :func:`simulate_crawls`.
Ephemeral content (Avrachenkov and Borkar (2018))
    :class:`SourceModel`, :func:`whittle_index`.
Threads
    :func:`set_num_threads`, :func:`get_num_threads` (large full batch updates).

References
----------
.. [1] K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web
   pages", Performance Evaluation 153, 2022.
.. [2] K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal freshness in web page
   crawling", VALUETOOLS 2020.
.. [3] R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy
   change-indicating signals", 2025.
.. [4] K. Avrachenkov, V. S. Borkar, "Whittle index policy for crawling ephemeral content", IEEE Transactions
   on Control of Network Systems 5(1), 2018.
"""

__version__ = "0.1.0.dev0"

from ._parallel import get_num_threads, set_num_threads
from .crawl_logs import LogError, LogRates, SingleCrawlWarning, estimate_log_rates, log_intervals
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
from .mle import (
    BinningWarning,
    ClippedEstimateWarning,
    CrawlTimesWarning,
    IntervalMLEBatch,
    IntervalMLEEstimator,
    cgm_rates,
    mle_rates,
    moment_rates,
)
from .pages import PageModel
from .policies import CrawlPolicy, LowDiscrepancy, NutchAdaptive, RoundRobin, UniformRandom
from .policy_simulation import PollSchedule, SimulationResult, simulate
from .rates import RatesResult, freshness, optimal_rates
from .schedule import Scheduler
from .sharding import ShardedScheduler
from .signals import SignalModelFit, fit_signal_model, naive_signal_model, simulate_signal_log
from .special import lambertw, residual_exp
from .synthetic_logs import simulate_crawls
from .thresholds import ThresholdsResult, optimal_thresholds
from .value import PageValueError, crawl_frequency, crawl_interval, crawl_value, fresh_time
from .whittle import SourceModel, whittle_index

__all__ = [
    "BinningWarning",
    "ClippedEstimateWarning",
    "CrawlPolicy",
    "CrawlTimesWarning",
    "IntervalMLEBatch",
    "IntervalMLEEstimator",
    "LLNBatch",
    "LLNEstimator",
    "LogError",
    "LogRates",
    "LowDiscrepancy",
    "NaiveBatch",
    "NaiveEstimator",
    "NutchAdaptive",
    "PageModel",
    "PageValueError",
    "PollSchedule",
    "RatesResult",
    "RoundRobin",
    "SABatch",
    "SAEstimator",
    "SAMBatch",
    "SAMEstimator",
    "Scheduler",
    "ShardedScheduler",
    "SignalModelFit",
    "SimulationResult",
    "SingleCrawlWarning",
    "SourceModel",
    "ThresholdsResult",
    "UniformRandom",
    "__version__",
    "cgm_rates",
    "crawl_frequency",
    "crawl_interval",
    "crawl_value",
    "estimate_log_rates",
    "estimate_rates",
    "fit_signal_model",
    "fresh_time",
    "freshness",
    "get_num_threads",
    "lambertw",
    "log_intervals",
    "mle_rates",
    "moment_rates",
    "naive_signal_model",
    "optimal_rates",
    "optimal_thresholds",
    "residual_exp",
    "set_num_threads",
    "simulate",
    "simulate_crawls",
    "simulate_signal_log",
    "whittle_index",
]
