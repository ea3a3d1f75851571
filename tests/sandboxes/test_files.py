"""Files in and out: exec streams, no symlink following, caps, odd names."""

from __future__ import annotations

import dataclasses
import hashlib
import os

import pytest

from sandboxes.files import MAX_REJECTED_LISTED, CopyInError

pytestmark = pytest.mark.timeout(300)


def test_a_symlink_in_output_pointing_at_a_host_path_does_not_leak_it(sandbox, tmp_path):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("host secret")
    sandbox.run_command(
        f"cd /testbed/output && ln -s {secret} leak && ln -s /etc/hostname hostname && echo ok > real.txt",
        timeout=30,
    )
    report = sandbox.copy_out(tmp_path / "out")
    assert [f.path for f in report.files] == ["real.txt"]
    assert dict(report.rejected) == {"leak": "symbolic link (not followed)", "hostname": "symbolic link (not followed)"}
    copied = sorted(p.name for p in (tmp_path / "out").rglob("*"))
    assert copied == ["real.txt"]


def test_ten_megabytes_go_in_and_come_out_intact(sandbox, tmp_path):
    payload = os.urandom(10 * 1024 * 1024)
    sandbox.write_files({"data/blob.bin": payload})
    result = sandbox.run_command(
        "sha256sum /testbed/input/data/blob.bin | cut -d' ' -f1; cp /testbed/input/data/blob.bin /testbed/output/",
        timeout=60,
    )
    assert result.output.strip() == hashlib.sha256(payload).hexdigest()
    report = sandbox.copy_out(tmp_path / "out")
    assert [(f.path, f.size) for f in report.files] == [("blob.bin", len(payload))]
    assert (tmp_path / "out" / "blob.bin").read_bytes() == payload


def test_odd_names_survive_or_are_rejected_with_a_reason(sandbox, tmp_path):
    long_name = "n" * 250
    sandbox.run_command(
        f"cd /testbed/output && touch 'café ☕ 地図.txt' {long_name} \"$(printf 'two\\nlines')\" && "
        "mkdir -p deep/er && echo x > deep/er/file.txt && mkfifo pipe",
        timeout=30,
    )
    report = sandbox.copy_out(tmp_path / "out")
    assert sorted(f.path for f in report.files) == sorted(["café ☕ 地図.txt", long_name, "deep/er/file.txt"])
    reasons = dict(report.rejected)
    assert "control character" in reasons["two\nlines"]
    assert reasons["pipe"] == "device or FIFO"


def test_copy_out_stops_at_the_file_count_cap(sandbox, tmp_path):
    sandbox.run_command("cd /testbed/output && for i in $(seq 1 20); do echo $i > f$i; done", timeout=30)
    sandbox.config = dataclasses.replace(sandbox.config, copy_out_max_files=5)
    report = sandbox.copy_out(tmp_path / "out")
    assert report.truncated
    assert len(report.files) == 5
    assert len(list((tmp_path / "out").iterdir())) == 5


def test_copy_in_refuses_paths_that_escape_the_destination(sandbox):
    for bad in ("../escape.txt", "/etc/passwd", "a/../../b", "new\nline"):
        with pytest.raises(CopyInError):
            sandbox.write_files({bad: b"x"})


def test_a_tree_of_directories_and_links_stops_at_a_cap_without_listing_every_name(sandbox, tmp_path):
    """Directories and links count too: a tree of thousands of them cannot grow the worker's report without end."""
    # One process makes the tree: 600 `mkdir`s and `ln`s, each a process of its own, took ~30 s under gVisor.
    result = sandbox.run_command(
        "cd /testbed/output && echo kept > a.txt && python3 -c 'import os\n"
        "for i in range(1, 301): os.mkdir(f\"d{i}\"); os.symlink(\"/etc/passwd\", f\"l{i}\")'",
        timeout=120,
    )
    assert result.exit_code == 0, result.output
    sandbox.config = dataclasses.replace(sandbox.config, copy_out_max_files=20)
    report = sandbox.copy_out(tmp_path / "out")
    assert report.truncated
    assert {f.path for f in report.files} <= {"a.txt"}  # tar's order is the directory's: it may come after the cap
    assert len(report.rejected) <= MAX_REJECTED_LISTED
    assert report.rejected[-1][1] == "more than 80 entries"
    assert not any((tmp_path / "out").glob("l*"))  # no link was followed or made


def test_past_the_file_cap_the_top_of_output_is_kept_and_what_was_left_out_is_counted(sandbox, tmp_path):
    """20,000 files in a subfolder and one at the top: the top one is kept, and the rest is counted and named."""
    result = sandbox.run_command(
        "cd /testbed/output && mkdir many && python3 -c 'for i in range(20000): open(f\"many/f{i:05}.txt\", \"w\")'"
        " && echo summary > top.txt",
        timeout=120,
    )
    assert result.exit_code == 0, result.output
    report = sandbox.copy_out(tmp_path / "out")
    paths = [f.path for f in report.files]
    assert "top.txt" in paths
    assert len(paths) == 1000
    assert report.truncated
    assert (report.rejected_total, report.counted_all) == (19_001, True)
    assert len(report.rejected) == MAX_REJECTED_LISTED
    assert report.rejected[0] == ("many/f00999.txt", "more than 1000 files")


def test_a_file_past_the_byte_cap_is_left_out_and_smaller_ones_after_it_are_kept(sandbox, tmp_path):
    sandbox.run_command(
        "cd /testbed/output && mkdir -p deep/er && head -c 5000 /dev/zero > a-big.bin && echo small > b.txt"
        " && echo deeper > deep/er/c.txt",
        timeout=30,
    )
    sandbox.config = dataclasses.replace(sandbox.config, copy_out_max_bytes=1000)
    report = sandbox.copy_out(tmp_path / "out")
    assert sorted(f.path for f in report.files) == ["b.txt", "deep/er/c.txt"]
    assert report.rejected == [("a-big.bin", "the output would exceed 1000 bytes")]
    assert report.truncated
