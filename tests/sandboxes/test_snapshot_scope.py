"""A version's /testbed archived in a real sandbox: the whole tree when it fits, output/ alone when it
does not, and the tree's size as `du` gives it either way (what the run page says was left out)."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.timeout(300)

MEGABYTE = 1024 * 1024


def test_the_whole_tree_is_kept_when_it_fits_and_its_size_is_told(sandbox):
    sandbox.run_command(
        "head -c 3145728 /dev/zero > /testbed/work.bin && echo made > /testbed/output/poster.txt", timeout=60
    )
    report = sandbox.save_snapshot(io.BytesIO(), max_bytes=64 * MEGABYTE)
    assert report is not None
    assert report.whole
    assert 3 * MEGABYTE <= report.testbed_bytes < 4 * MEGABYTE
    assert report.left_out == ""


def test_over_the_limit_only_output_is_kept_and_the_trees_size_is_told(sandbox):
    sandbox.run_command(
        "head -c 3145728 /dev/urandom > /testbed/work.bin && echo made > /testbed/output/poster.txt", timeout=60
    )
    report = sandbox.save_snapshot(io.BytesIO(), max_bytes=MEGABYTE)
    assert report is not None
    assert not report.whole
    assert 3 * MEGABYTE <= report.testbed_bytes < 4 * MEGABYTE
    assert "the whole /testbed was 3" in report.left_out
