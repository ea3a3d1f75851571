"""Keeping what a long-lived process made as it started out of the garbage collector's full passes.

A web process or a worker holds about 170,000 objects once Django, the apps and their libraries are
loaded: modules, classes, functions, the URLconf, the API's schema models. They live as long as the
process, yet every full collection walks all of them, and it stops every thread of the process while
it does. On a two-core machine one such pass took 90 to 130 ms right after the start (bench/gc_pause.py)
and up to 195 ms under load, in daphne and in the worker, and every live event in flight waited for it.

Frozen (gc.freeze), they sit in a generation of their own that collections skip; only what the
process made since is walked. Called once, when the process has loaded what it serves from.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Move every object alive now out of the collector's reach. Garbage left by the start is
    collected first, so that none of it is kept for good."""
    gc.collect()
    gc.freeze()
