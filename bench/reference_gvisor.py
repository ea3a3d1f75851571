"""Launch the reference `llm-in-sandbox` CLI with its containers under gVisor.

Run with the reference's own virtualenv (bench/.venv-reference), never ours:

    bench/.venv-reference/bin/python bench/reference_gvisor.py run --query ... [CLI arguments]

The reference starts its container with the Docker SDK (`containers.run`),
not the `docker` command, and has no runtime option, so a `docker` wrapper on
PATH would not reach it and changing the engine's default runtime would
affect every other container. This launcher wraps that one SDK call instead,
adding the runtime (default runsc, or $REFERENCE_RUNTIME) and root as the
user (the reference's own image runs as root; it needs to create /testbed).
Nothing else of the reference is changed.

It prints `RUN_START <monotonic seconds>` to stderr once its imports are
done, so the benchmark can tell interpreter start-up from the run itself.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import docker.models.containers

RUNTIME = os.environ.get("REFERENCE_RUNTIME", "runsc")
_original_run = docker.models.containers.ContainerCollection.run


def _run_with_runtime(self: Any, image: Any, command: Any = None, **kwargs: Any) -> Any:
    kwargs.setdefault("runtime", RUNTIME)
    kwargs.setdefault("user", "root")
    return _original_run(self, image, command, **kwargs)


docker.models.containers.ContainerCollection.run = _run_with_runtime  # type: ignore[method-assign, assignment]

from llm_in_sandbox.cli import main  # noqa: E402 - after the patch, as the CLI would import it

if __name__ == "__main__":
    print(f"RUN_START {time.monotonic()}", file=sys.stderr, flush=True)
    sys.argv = ["llm-in-sandbox", *sys.argv[1:]]
    main()
