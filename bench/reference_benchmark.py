"""Launch the reference `llm-in-sandbox benchmark` command, its containers under gVisor as
bench/reference_gvisor.py starts them, and say when each problem started and ended.

Run with the reference's own virtualenv (bench/.venv-reference), never ours:

    bench/.venv-reference/bin/python bench/reference_benchmark.py benchmark --task /abs/dir [CLI arguments]

The command times only the whole benchmark (`elapsed_time_seconds` in its results.json). To get
each problem's time this wraps its runner's `run_single_problem` (whatever the worker process
runs for one problem: sandbox started, agent run, answer read and scored, sandbox stopped), and
prints `TASK_TIME <id> <start> <end>` (monotonic seconds, one clock for every process of the
machine) to stderr as each ends. Nothing else is changed; the wrapper keeps the function's name,
so the command's process pool still finds it (its workers are forked, the wrapper with them).
"""

from __future__ import annotations

import functools
import sys
import time
from typing import Any

import reference_gvisor  # the gVisor runtime patched into the Docker SDK; its directory is sys.path[0]
from llm_in_sandbox.benchmark import runner

_run_single_problem = runner.run_single_problem


@functools.wraps(_run_single_problem)
def _timed(args: dict[str, Any]) -> Any:
    started = time.monotonic()
    try:
        return _run_single_problem(args)
    finally:
        print(f"TASK_TIME {args['problem']['id']} {started} {time.monotonic()}", file=sys.stderr, flush=True)


runner.run_single_problem = _timed

if __name__ == "__main__":
    print(f"RUN_START {time.monotonic()}", file=sys.stderr, flush=True)
    sys.argv = ["llm-in-sandbox", *sys.argv[1:]]
    reference_gvisor.main()
