"""The benchmarks, each a script: `python bench/NAME.py` (`make bench` runs them all).

A package so that pyproject.toml's import contracts cover them: what they start comes from
devstack/, never from the tests' helpers.
"""
