"""The isolated computer an agent works in: its image, limits, network and the hosts that run it."""

import socket

from marshmallow.validate import OneOf, Range, Regexp

from config.settings.base import BASE_DIR, env
from sandboxes.agent.config import DEFAULTS as AGENT_DEFAULTS

# --- Sandboxes ---
# (limits and knobs of the isolated computer; see platform/sandbox/README.md)
# runsc (gVisor) isolates; runc is for development only and logs a warning.
SANDBOX_RUNTIME = env.str("SANDBOX_RUNTIME", default="runsc")
# Empty: the tag built by `manage.py build_sandbox_image` (a hash of its inputs).
SANDBOX_IMAGE = env.str("SANDBOX_IMAGE", default="")
SANDBOX_IMAGE_REPOSITORY = env.str("SANDBOX_IMAGE_REPOSITORY", default="atelier-sandbox")
SANDBOX_BASE_IMAGE = env.str("SANDBOX_BASE_IMAGE", default="python:3.11-slim-bookworm")
SANDBOX_DEBIAN_MIRROR = env.str("SANDBOX_DEBIAN_MIRROR", default="http://deb.debian.org/debian")
# Where the image build fetches the npm tarballs it ships (platform/sandbox/npm-assets.txt), integrity-checked.
SANDBOX_NPM_REGISTRY = env.str("SANDBOX_NPM_REGISTRY", default="https://registry.npmjs.org")
SANDBOX_BUILD_CACHE_DIR = env.path("SANDBOX_BUILD_CACHE_DIR", default=BASE_DIR / ".cache" / "sandbox-image")
SANDBOX_MEMORY = env.str("SANDBOX_MEMORY", default="2g")
SANDBOX_CPUS = env.float("SANDBOX_CPUS", default=1.0, validate=Range(min=0.1))
# Let a sandbox spend CPU time it left unused (up to one 100 ms period's worth) above SANDBOX_CPUS
# for a moment, so starting a process after a pause is not throttled; the average stays at
# SANDBOX_CPUS (sandboxes/cpu_burst.py). Needs write access to the sandbox's cgroup; without it, a no-op.
SANDBOX_CPU_BURST = env.bool("SANDBOX_CPU_BURST", default=True)
# CPU weight of one sandbox (cgroup cpu.shares, Docker's default 1024), set at creation (runsc
# refuses `docker update`): below other containers of the host, e.g. a containerised web or Redis.
SANDBOX_CPU_SHARES = env.int("SANDBOX_CPU_SHARES", default=256, validate=Range(min=2, max=262144))
# The cgroup the sandboxes are created under, with a low CPU weight the worker gives it as it starts
# (sandboxes/cpu_priority.py; with Docker's systemd driver it becomes a slice: atelier-sandboxes.slice).
# Weights only compete among siblings: in Docker's default parent (empty here) busy sandboxes take
# the CPU the live stream needs (platform/sandbox/README.md, "CPU priority").
SANDBOX_CGROUP_PARENT = env.str("SANDBOX_CGROUP_PARENT", default="/atelier-sandboxes")
# The platform's own sandboxes (previews, comparisons) under a group of their own at half a process's
# weight: in the agents' group, busy runs starve them past their tools' time limits (sandboxes/cpu_priority.py).
SANDBOX_OFFLINE_CGROUP_PARENT = env.str("SANDBOX_OFFLINE_CGROUP_PARENT", default="/atelier_offline")
SANDBOX_PIDS_LIMIT = env.int("SANDBOX_PIDS_LIMIT", default=4096, validate=Range(min=64))  # host threads under gVisor
SANDBOX_NPROC = env.int("SANDBOX_NPROC", default=256, validate=Range(min=16))
SANDBOX_NOFILE = env.int("SANDBOX_NOFILE", default=1024, validate=Range(min=64))
SANDBOX_TMP_SIZE = env.str("SANDBOX_TMP_SIZE", default="512m")
SANDBOX_HOME_SIZE = env.str("SANDBOX_HOME_SIZE", default="256m")
SANDBOX_TESTBED_SIZE = env.str("SANDBOX_TESTBED_SIZE", default="1g")
SANDBOX_START_TIMEOUT = env.float("SANDBOX_START_TIMEOUT", default=60.0, validate=Range(min=1))
SANDBOX_COMMAND_TIMEOUT = env.float(
    "SANDBOX_COMMAND_TIMEOUT", default=AGENT_DEFAULTS["SANDBOX_COMMAND_TIMEOUT"], validate=Range(min=1)
)
SANDBOX_OUTPUT_LIMIT = env.int("SANDBOX_OUTPUT_LIMIT", default=16_000, validate=Range(min=1000))  # chars the model sees
# Characters of a command's output streamed live (the rest is still saved in the sandbox).
SANDBOX_STREAM_LIMIT = env.int("SANDBOX_STREAM_LIMIT", default=1_000_000, validate=Range(min=1000))
# Bytes a command may print before it is stopped (the worker reads no more; the model sees head and tail).
SANDBOX_OUTPUT_MAX_BYTES = env.int("SANDBOX_OUTPUT_MAX_BYTES", default=128 * 1024 * 1024, validate=Range(min=1 << 20))
SANDBOX_COPY_IN_MAX_BYTES = env.int("SANDBOX_COPY_IN_MAX_BYTES", default=200 * 1024 * 1024, validate=Range(min=1))
SANDBOX_COPY_OUT_MAX_BYTES = env.int("SANDBOX_COPY_OUT_MAX_BYTES", default=500 * 1024 * 1024, validate=Range(min=1))
SANDBOX_COPY_OUT_MAX_FILES = env.int("SANDBOX_COPY_OUT_MAX_FILES", default=1000, validate=Range(min=1))
SANDBOX_NETWORK_MODE = env.str("SANDBOX_NETWORK_MODE", default="internet", validate=OneOf(["internet", "none"]))
SANDBOX_NETWORK_NAME = env.str("SANDBOX_NETWORK_NAME", default="atelier-sandbox")
SANDBOX_NETWORK_BRIDGE = env.str("SANDBOX_NETWORK_BRIDGE", default="atl-sandbox0")
SANDBOX_NETWORK_SUBNET = env.str("SANDBOX_NETWORK_SUBNET", default="")  # empty: Docker picks one
SANDBOX_DNS: list[str] = env.list("SANDBOX_DNS", default=[])  # resolvers the sandbox may use; empty: Docker's
# Freeze a sandbox's processes between commands while nothing of the agent's
# runs in it (the model is thinking): an idle gVisor sandbox otherwise costs
# CPU. Needs write access to the sandbox's cgroup; without it, a no-op.
SANDBOX_FREEZE_IDLE = env.bool("SANDBOX_FREEZE_IDLE", default=True)
SANDBOX_POOL_SIZE = env.int("SANDBOX_POOL_SIZE", default=0, validate=Range(min=0))
SANDBOX_POOL_MAX_AGE = env.int("SANDBOX_POOL_MAX_AGE", default=3600, validate=Range(min=60))  # seconds
SANDBOX_ORPHAN_MIN_AGE = env.int("SANDBOX_ORPHAN_MIN_AGE", default=6 * 3600, validate=Range(min=0))  # seconds
# Dotted path of a callable(run_id: str) -> bool telling the janitor whether a run is active.
SANDBOX_RUN_ACTIVE_CHECK = env.str("SANDBOX_RUN_ACTIVE_CHECK", default="")
# Each worker sweeps its own host's engine (at start, then every interval): a
# beat task would land on one host only. sandboxes/host_keeper.py.
SANDBOX_JANITOR_INTERVAL = env.int("SANDBOX_JANITOR_INTERVAL", default=300, validate=Range(min=10))  # seconds
# The worker host this worker's Docker engine belongs to. Every sandbox carries
# it as a label, and a host's janitor and reaper remove only their own host's
# containers. Workers sharing one engine share the id; it must stay the same
# across restarts (a container's host name changes when it is recreated, so
# the deployment files set it), or a restarted host cannot clean up after itself.
SANDBOX_HOST_ID = env.str(
    "SANDBOX_HOST_ID",
    default=socket.gethostname()[:63] or "localhost",
    validate=Regexp(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$", error="SANDBOX_HOST_ID: letters, digits, '.', '_', '-'"),
)
# How often a worker says its host is alive (with whether its engine works), and
# how long that claim lasts: /healthz/workers counts the hosts whose claim is current.
SANDBOX_HOST_BEAT_SECONDS = env.float("SANDBOX_HOST_BEAT_SECONDS", default=10.0, validate=Range(min=0.5))
# How often a worker asks its engine (`docker info`) whether it still has the sandbox runtime
# and image; between those checks each beat only asks whether the engine answers.
SANDBOX_ENGINE_CHECK_SECONDS = env.float("SANDBOX_ENGINE_CHECK_SECONDS", default=60.0, validate=Range(min=1))
