"""Per-page parameters of the signal model: :class:`PageModel` and the one shared page check.

A page changes at rate ``Delta`` (``change_rate``) and is requested at rate ``mu`` (``importance``);
each change is signalled (e.g. by a sitemap ping) with probability ``lambda`` (``recall``) and false
signals arrive at rate ``nu`` (``false_rate``).  :class:`PageModel` validates these once and derives
the quantities every crawl-value computation needs (``alpha``, ``gamma``, ``beta``); the functions of
:mod:`freshcore.value` and :mod:`freshcore.thresholds`, the schedulers and the policy simulator take
it as their ``pages`` argument and check it with :func:`check_pages`.

References
----------
Busa-Fekete, Zimmert, György et al., "A scalable crawling algorithm utilizing noisy change-indicating
signals", 2025 (Section 3: the signal model, Lemma 1: the effective elapsed time).
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from freshcore import _value
from freshcore._validation import broadcast_parameters, check_array

__all__ = ["PageModel", "check_pages"]


def _read_only_copy(a: np.ndarray) -> np.ndarray:
    """A C-contiguous float64 copy of ``a`` that cannot be written to (the model's arrays are shared)."""
    a = np.array(a, dtype=np.float64, copy=True, order="C")
    a.flags.writeable = False
    return a


class PageModel:
    """Per-page parameters of the signal model, validated once (SPEC section 3).

    Parameters
    ----------
    change_rate : float or array_like of shape (n_pages,)
        ``Delta >= 0``, Poisson rate of content changes.
    importance : float or array_like of shape (n_pages,)
        ``mu >= 0``, request rate (importance) of each page.
    recall : float or array_like of shape (n_pages,), default=0.0
        ``lambda`` in ``[0, 1]``: probability that a change is signalled.
    false_rate : float or array_like of shape (n_pages,), default=0.0
        ``nu >= 0``: rate of false signals.

    Scalars broadcast against the arrays.  All attributes are read-only
    float64 arrays of shape ``(n_pages,)``.

    Attributes
    ----------
    change_rate, importance, recall, false_rate : ndarray
        The parameters.
    alpha : ndarray
        ``(1 - lambda) Delta``, the rate of unsignalled changes.
    gamma : ndarray
        ``lambda Delta + nu``, the rate of signals.
    beta : ndarray
        ``-log(nu/gamma)/alpha = log1p(lambda Delta/nu)/alpha``, the
        time-equivalent of one signal (``tau_eff = tau_elap + beta n_cis``).
        Degenerate values: ``beta = 0`` when ``lambda Delta = 0`` (signals
        carry no information: the value is the Greedy one); otherwise
        ``beta = inf`` when ``nu = 0`` (a signal proves a change) or
        ``alpha = 0`` (``lambda = 1``: every change is signalled, so the page
        is fresh for sure until a signal arrives; ``V = 0`` at finite ``iota``).
    normalized_importance : ndarray
        ``mu / sum(mu)`` (the paper's ``mu~``; zeros if every ``mu`` is 0).

    Notes
    -----
    ``len(pages)`` is the number of pages; ``pages[idx]`` (an integer, slice,
    boolean mask or index array) is the sub-model of the selected pages;
    models compare equal when all their parameters do, and pickle.

    Examples
    --------
    >>> from freshcore.pages import PageModel
    >>> pages = PageModel([1.0, 0.5], [2.0, 1.0], recall=0.5, false_rate=[0.1, 0.0])
    >>> len(pages), pages.gamma.tolist(), float(pages.beta[1])
    (2, [0.6, 0.25], inf)
    >>> pages[1].change_rate.tolist()
    [0.5]
    """

    __slots__ = ("_alpha", "_beta", "_change_rate", "_false_rate", "_gamma", "_importance", "_recall")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, change_rate: Any, importance: Any, recall: Any = 0.0, false_rate: Any = 0.0) -> None:
        caller = "PageModel"
        dl = check_array(change_rate, "change_rate", caller, ndim=(0, 1), low=0.0)
        mu = check_array(importance, "importance", caller, ndim=(0, 1), low=0.0)
        lam = check_array(recall, "recall", caller, ndim=(0, 1), low=0.0, high=1.0)
        nu = check_array(false_rate, "false_rate", caller, ndim=(0, 1), low=0.0)
        dl, mu, lam, nu = broadcast_parameters(caller, "pages", change_rate=(dl, change_rate),
                                               importance=(mu, importance), recall=(lam, recall),
                                               false_rate=(nu, false_rate))
        self._change_rate = _read_only_copy(dl)
        self._importance = _read_only_copy(mu)
        self._recall = _read_only_copy(lam)
        self._false_rate = _read_only_copy(nu)
        self._derive()

    def _derive(self) -> None:
        dl, lam, nu = self._change_rate, self._recall, self._false_rate
        alpha = (1.0 - lam) * dl
        lam_dl = lam * dl
        gamma = lam_dl + nu
        # beta = log1p(lambda Delta / nu) / alpha with its degenerate limits, in compiled code
        # shared with the scheduler (which recomputes it rather than store it): the same bits
        beta = np.empty(len(dl))
        _value.beta_kernel(*(np.ascontiguousarray(a, dtype=np.float64) for a in (dl, lam, nu)), beta)  # type: ignore[call-arg, arg-type, unused-ignore]
        self._alpha = _read_only_copy(alpha)
        self._gamma = _read_only_copy(gamma)
        self._beta = _read_only_copy(beta)

    @classmethod
    def _from_valid(cls, dl: np.ndarray, mu: np.ndarray, lam: np.ndarray, nu: np.ndarray) -> PageModel:
        self = cls.__new__(cls)
        self._change_rate, self._importance = _read_only_copy(dl), _read_only_copy(mu)
        self._recall, self._false_rate = _read_only_copy(lam), _read_only_copy(nu)
        self._derive()
        return self

    change_rate = property(lambda self: self._change_rate, doc="Delta, change rates.")
    importance = property(lambda self: self._importance, doc="mu, request rates.")
    recall = property(lambda self: self._recall, doc="lambda, signal recall.")
    false_rate = property(lambda self: self._false_rate, doc="nu, false-signal rates.")
    alpha = property(lambda self: self._alpha, doc="(1 - lambda) Delta.")
    gamma = property(lambda self: self._gamma, doc="lambda Delta + nu.")
    beta = property(lambda self: self._beta, doc="Time-equivalent of one signal.")

    @property
    def normalized_importance(self) -> np.ndarray:
        """``mu / sum(mu)`` (zeros when every ``mu`` is 0)."""
        total = self._importance.sum()
        out = self._importance / total if total > 0 else np.zeros_like(self._importance)
        out.flags.writeable = False
        return out

    def __len__(self) -> int:
        return len(self._change_rate)

    def __getitem__(self, idx: Any) -> PageModel:
        if isinstance(idx, (numbers.Integral, np.integer)) and not isinstance(idx, (bool, np.bool_)):
            idx = [_page_index(idx, len(self))]
        arrays = [np.atleast_1d(a[idx]) for a in (self._change_rate, self._importance, self._recall, self._false_rate)]
        return PageModel._from_valid(*arrays)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PageModel):
            return NotImplemented
        return all(
            np.array_equal(a, b)
            for a, b in zip(
                (self._change_rate, self._importance, self._recall, self._false_rate),
                (other._change_rate, other._importance, other._recall, other._false_rate),
            )
        )

    def __reduce__(self) -> tuple[type[PageModel], tuple[np.ndarray, ...]]:
        return (PageModel, (self._change_rate, self._importance, self._recall, self._false_rate))

    def __repr__(self) -> str:
        return f"PageModel(n_pages={len(self)})"


def _page_index(i: Any, n: int) -> int:
    """Normalise an integer page index (negative counts from the end); IndexError when out of range."""
    k = int(i)
    if not -n <= k < n:
        raise IndexError(f"page index {k} is out of range for {n} pages")
    return k % n


def check_pages(pages: Any, caller: str, name: str = "pages") -> PageModel:
    """``pages`` itself if it is a :class:`PageModel`; TypeError otherwise.

    Parameters
    ----------
    pages : object
        The argument to check.
    caller : str
        The public function or method that received it (named in the message).
    name : str, default="pages"
        The parameter's name (named in the message).

    Returns
    -------
    PageModel
        ``pages``.

    Raises
    ------
    TypeError
        "The 'pages' parameter of {caller} must be a PageModel. Got {type} instead."
    """
    if not isinstance(pages, PageModel):
        raise TypeError(
            f"The {name!r} parameter of {caller} must be a PageModel. Got {type(pages).__name__} instead."
        )
    return pages
