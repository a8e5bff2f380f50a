"""freshcore: keep a crawler's copy of the web fresh.

Change-rate estimation, optimal crawl rates under a bandwidth budget and crawl
scheduling, with a compiled Cython core.
"""

__version__ = "0.1.0.dev0"

__all__ = ["__version__"]
