"""Image build benchmark: what building the sandbox image from its prepared context costs.

    .venv/bin/python bench/image_build.py [--rounds 1] [--baseline-revision cb55ffe]

On a fresh machine (CI's every run) the tests that start sandboxes wait for this image, and the
tests of the production images build theirs the same way. Measured per build, with Docker's layer
cache off and the context already prepared (wheels, uv, assets and the offline base in the build
cache, as `build_sandbox_image --offline` leaves them): the wall time and the CPU time of the
whole machine, Debian's downloads included.

Now: platform/sandbox/Dockerfile as it is, one stage: uv installs the wheels it reads from the host's
loopback (sandboxes/build_packages.py). Baseline, in the same run, rounds alternating: the Dockerfile
of `--baseline-revision`, where the wheels and uv came in the build context and were installed in a
stage of their own whose virtualenv the image copied. Each result says the image's size. Writes
bench/results/image_build.json.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

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
from sandboxes.image import BuildInputs, docker_build, prepare_sandbox_context  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "image_build.json"
DOCKERFILE = "platform/sandbox/Dockerfile"
BENCH_TAG = "atelier-sandbox-bench"


class Sample(NamedTuple):
    wall: float
    cpu: float
    size: int
    left_behind: int  # images of build stages that nothing uses (pruned by the benchmark)


def quiet(_: str) -> None:
    pass


def dockerfile_at(revision: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:{DOCKERFILE}"], capture_output=True, text=True, check=True
    ).stdout


def build(client: docker.DockerClient, inputs: BuildInputs, dockerfile: str, tag: str, *, served: bool) -> Sample:
    """One build without Docker's cache: served, the packages come from the loopback; otherwise they are
    in the context, under wheels/, as the baseline's Dockerfile copies them."""
    (inputs.context / "Dockerfile").write_text(dockerfile)
    in_context = inputs.context / "wheels"
    dangling_before = {image.id for image in client.images.list(filters={"dangling": True})}
    if not served:
        shutil.copytree(inputs.packages, in_context, copy_function=os.link)
    try:
        packages = inputs.packages if served else None
        wall, cpu = wall_and_machine_cpu(
            lambda: docker_build(
                client, inputs.context, tag, inputs.base_image, quiet, labels={}, packages=packages, no_cache=True
            )
        )
    finally:
        shutil.rmtree(in_context, ignore_errors=True)
    size = int(client.images.get(tag).attrs["Size"])
    client.images.remove(tag, force=True)
    left_behind = {image.id for image in client.images.list(filters={"dangling": True})} - dangling_before
    client.images.prune(filters={"dangling": True})
    return Sample(wall, cpu, size, left_behind=len(left_behind))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline-revision", default="cb55ffe")
    args = parser.parse_args()
    client = docker.from_env(timeout=900)
    inputs = prepare_sandbox_context(client, offline=True, log=print)
    now_text, before_text = (ROOT / DOCKERFILE).read_text(), dockerfile_at(args.baseline_revision)
    report = report_opening(baseline_revision=args.baseline_revision)
    now: list[Sample] = []
    before: list[Sample] = []
    for _ in range(args.rounds):
        before.append(build(client, inputs, before_text, f"{BENCH_TAG}:baseline", served=False))
        now.append(build(client, inputs, now_text, f"{BENCH_TAG}:now", served=True))
    for name, samples in (("baseline_wheels_in_the_context_two_stages", before), ("now_wheels_served_one_stage", now)):
        report[name] = {
            **medians_of_wall_and_cpu([(s.wall, s.cpu) for s in samples], digits=1),
            "image_megabytes": round(samples[-1].size / 1e6),
            "stage_images_left_behind": samples[-1].left_behind,
        }
    report["speed_after"] = machine_speed()
    write_results(RESULTS, report)


if __name__ == "__main__":
    main()
