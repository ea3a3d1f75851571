"""Offline base benchmark: what making the sandbox image's base costs on a machine with no registry.

    .venv/bin/python bench/offline_base.py [--rounds 2]   # needs mmdebstrap and, for the baseline, debootstrap

On a fresh machine (CI's every run) `build_sandbox_image --offline` makes a minimal bookworm root
filesystem from the Debian mirror before anything else of the image, and the tests that start
sandboxes wait for the image. Measured per root filesystem, written as a tar file (what `docker
import` reads): the wall time and the CPU time of the whole machine; downloads included.

Now: mmdebstrap (apt's parallel downloads, the tar written as it goes), as `sandboxes.image` runs it.
Baseline, in the same run, rounds alternating: debootstrap into a folder, then tar, as before.
Writes bench/results/offline_base.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402

from bench.measuring import (  # noqa: E402
    machine_speed,
    medians_of_wall_and_cpu,
    report_opening,
    wall_and_machine_cpu,
    write_results,
)
from sandboxes.image import offline_base_argv  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "offline_base.json"


def with_mmdebstrap(work: Path) -> None:
    subprocess.run(offline_base_argv(str(work / "base.tar")), check=True, capture_output=True)


def with_debootstrap(work: Path) -> None:
    argv = ["debootstrap", "--variant=minbase", "bookworm", str(work / "rootfs"), settings.SANDBOX_DEBIAN_MIRROR]
    subprocess.run(argv, check=True, capture_output=True)
    subprocess.run(["tar", "-C", str(work / "rootfs"), "-cf", str(work / "base.tar"), "."], check=True)


def measured(make: Callable[[Path], None], tmp: Path) -> tuple[float, float]:
    work = Path(tempfile.mkdtemp(dir=tmp))
    result = wall_and_machine_cpu(lambda: make(work))
    shutil.rmtree(work)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    for tool in ("mmdebstrap", "debootstrap"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not installed (apt-get install {tool}).")
    report = report_opening(mirror=settings.SANDBOX_DEBIAN_MIRROR)
    now: list[tuple[float, float]] = []
    before: list[tuple[float, float]] = []
    with tempfile.TemporaryDirectory(prefix="bench-offline-base-") as tmp:
        for _ in range(args.rounds):
            before.append(measured(with_debootstrap, Path(tmp)))
            now.append(measured(with_mmdebstrap, Path(tmp)))
    report["baseline_debootstrap_then_tar"] = medians_of_wall_and_cpu(before, digits=1)
    report["now_mmdebstrap_to_tar"] = medians_of_wall_and_cpu(now, digits=1)
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
