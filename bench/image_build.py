"""Image build benchmark: what building the sandbox image from its prepared context costs.

    .venv/bin/python bench/image_build.py [--rounds 1] [--baseline-revision ad3f0a6]

On a fresh machine (CI's every run) the tests that start sandboxes wait for this image, and the
tests of the production images build theirs the same way. Measured per build, with Docker's layer
cache off and the context already prepared (wheels, uv, assets and the offline base in the build
cache, as `build_sandbox_image --offline` leaves them): the wall time and the CPU time of the
whole machine, Debian's downloads included.

Now: platform/sandbox/Dockerfile as it is (uv installs the wheels in a stage of their own, whose
virtualenv the image copies; dpkg without a sync per file). Baseline, in the same run, rounds
alternating: the Dockerfile of `--baseline-revision` (pip installs the wheels in the image, whose
layers keep them; dpkg syncing each file), with the same context. Each result says the image's size.
Writes bench/results/image_build.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.test_settings")

import django  # noqa: E402

django.setup()

import docker  # noqa: E402

from bench.measuring import (  # noqa: E402
    machine_speed,
    medians_of_wall_and_cpu,
    report_opening,
    wall_and_machine_cpu,
    write_results,
)
from sandboxes.image import docker_build, prepare_sandbox_context  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "image_build.json"
DOCKERFILE = "platform/sandbox/Dockerfile"
BENCH_TAG = "atelier-sandbox-bench"


def quiet(_: str) -> None:
    pass


def dockerfile_at(revision: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:{DOCKERFILE}"], capture_output=True, text=True, check=True
    ).stdout


def build(
    client: docker.DockerClient, context: Path, base_image: str, dockerfile: str, tag: str
) -> tuple[float, float, int]:
    (context / "Dockerfile").write_text(dockerfile)
    wall, cpu = wall_and_machine_cpu(
        lambda: docker_build(client, context, tag, base_image, quiet, labels={}, no_cache=True)
    )
    size = int(client.images.get(tag).attrs["Size"])
    client.images.remove(tag, force=True)
    client.images.prune(filters={"dangling": True})  # the stages' images, which nothing else uses
    return wall, cpu, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline-revision", default="ad3f0a6")
    args = parser.parse_args()
    client = docker.from_env(timeout=900)
    context, base_image = prepare_sandbox_context(client, offline=True, log=print)
    now_text, before_text = (ROOT / DOCKERFILE).read_text(), dockerfile_at(args.baseline_revision)
    report = report_opening(baseline_revision=args.baseline_revision)
    now: list[tuple[float, float, int]] = []
    before: list[tuple[float, float, int]] = []
    for _ in range(args.rounds):
        before.append(build(client, context, base_image, before_text, f"{BENCH_TAG}:baseline"))
        now.append(build(client, context, base_image, now_text, f"{BENCH_TAG}:now"))
    for name, samples in (("baseline_pip_in_the_image_synced_dpkg", before), ("now_uv_in_a_stage_unsynced_dpkg", now)):
        report[name] = {
            **medians_of_wall_and_cpu([(wall, cpu) for wall, cpu, _ in samples], digits=1),
            "image_megabytes": round(samples[-1][2] / 1e6),
        }
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
