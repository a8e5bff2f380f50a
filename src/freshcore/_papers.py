"""The papers the docstrings cite, each written out once, and :func:`cites`, which gives a docstring its
numpydoc References section.

A docstring cites a paper in its text by author and year ("eq. (2) of Avrachenkov et al. (2022)") and
names it in full under References; ``@cites(AVRACHENKOV_2022)`` above a function or class writes that
section from the entries below, so a module that cites one paper in many docstrings states it once.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from typing import TypeVar

AVRACHENKOV_2022 = ('K. Avrachenkov, K. Patil, G. Thoppe, "Online algorithms for estimating change rates of web '
                    'pages", Performance Evaluation 153, 2022.')
AVRACHENKOV_2020 = ('K. Avrachenkov, K. Patil, G. Thoppe, "Change rate estimation and optimal freshness in web page '
                    'crawling", VALUETOOLS 2020.')
BUSA_FEKETE_2025 = ('R. Busa-Fekete, J. Zimmert, A. György et al., "A scalable crawling algorithm utilizing noisy '
                    'change-indicating signals", 2025.')
CHO_GARCIA_MOLINA_2003 = ('J. Cho, H. Garcia-Molina, "Estimating frequency of change", ACM Transactions on Internet '
                          'Technology 3(3), 2003.')
AZAR_2018 = ('Y. Azar, E. Horvitz, E. Lubetzky, Y. Peres, D. Shahaf, "Tractable near-optimal policies for '
             'crawling", PNAS 115(32), 2018.')
UPADHYAY_2020 = ('U. Upadhyay, R. Busa-Fekete, W. Kotlowski, D. Pál, B. Szörényi, "Learning to crawl", '
                 'AAAI 2020.')
LI_2017 = ('X. Li, D. B. H. Cline, D. Loguinov, "Temporal update dynamics under blind sampling", IEEE/ACM '
           'Transactions on Networking 25(1), 2017 (an earlier version in IEEE INFOCOM 2015).')

AVRACHENKOV_BORKAR_2018 = ('K. Avrachenkov, V. S. Borkar, "Whittle index policy for crawling ephemeral content", IEEE '
                           'Transactions on Control of Network Systems 5(1), 2018.')

_T = TypeVar("_T")
_EXAMPLES = re.compile(r"^([ \t]*)Examples\n\1-+[ \t]*$", re.MULTILINE)
_WIDTH = 100  # columns of an entry, its indentation included


def _section(*papers: str, indent: str = "") -> str:
    """The numpydoc References section naming ``papers`` (numbered ``.. [1]``, ...), each line after
    ``indent``, ending with a blank line."""
    lines = ["References", "----------"]
    for k, paper in enumerate(papers, 1):
        label = f".. [{k}] "
        lines += textwrap.wrap(paper, _WIDTH - len(indent), initial_indent=label,
                               subsequent_indent="   ", break_on_hyphens=False)
    return "".join(f"{indent}{line}\n" for line in lines) + "\n"


def cites(*papers: str) -> Callable[[_T], _T]:
    """Decorator: a References section naming ``papers`` in the docstring, before its Examples (numpydoc's
    order) or at its end."""

    def add_references(obj: _T) -> _T:
        doc = obj.__doc__
        if doc is None:  # python -OO
            return obj
        found = _EXAMPLES.search(doc)
        if found is None:  # at the end, indented as the docstring's other lines
            doc = doc.rstrip() + "\n\n"
            at = len(doc)
            indent = min((_indent(line) for line in doc.splitlines()[1:] if line.strip()), key=len, default="")
        else:
            at, indent = found.start(), found.group(1)
        obj.__doc__ = doc[:at] + _section(*papers, indent=indent) + doc[at:]
        return obj

    return add_references


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]
