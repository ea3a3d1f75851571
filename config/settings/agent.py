"""The agent and the language models it talks to: its limits, the model client's timeouts and
retries, and which model servers (endpoints) a workspace may register."""

from marshmallow.validate import Range

from config.settings.base import DEBUG, env
from sandboxes.agent.config import DEFAULTS as AGENT_DEFAULTS

# --- Agent ---
# (model client and agent loop)
AGENT_MAX_STEPS = env.int(
    "AGENT_MAX_STEPS", default=AGENT_DEFAULTS["AGENT_MAX_STEPS"], validate=Range(min=1)
)  # default per-run step limit
AGENT_MAX_WALL_SECONDS = env.float(
    "AGENT_MAX_WALL_SECONDS", default=AGENT_DEFAULTS["AGENT_MAX_WALL_SECONDS"], validate=Range(min=10)
)
AGENT_MODEL_TIMEOUT = env.float(
    "AGENT_MODEL_TIMEOUT", default=AGENT_DEFAULTS["AGENT_MODEL_TIMEOUT"], validate=Range(min=1)
)  # s without a byte
AGENT_MODEL_CONNECT_TIMEOUT = env.float(
    "AGENT_MODEL_CONNECT_TIMEOUT", default=AGENT_DEFAULTS["AGENT_MODEL_CONNECT_TIMEOUT"], validate=Range(min=0.1)
)
AGENT_MODEL_RETRIES = env.int(
    "AGENT_MODEL_RETRIES", default=AGENT_DEFAULTS["AGENT_MODEL_RETRIES"], validate=Range(min=0, max=20)
)
AGENT_MODEL_BACKOFF_INITIAL = env.float(
    "AGENT_MODEL_BACKOFF_INITIAL", default=AGENT_DEFAULTS["AGENT_MODEL_BACKOFF_INITIAL"], validate=Range(min=0)
)
AGENT_MODEL_BACKOFF_MAX = env.float(
    "AGENT_MODEL_BACKOFF_MAX", default=AGENT_DEFAULTS["AGENT_MODEL_BACKOFF_MAX"], validate=Range(min=0)
)
# A reply's reported usage is held to 0..this many tokens (prompt and completion each) before it
# reaches the run's totals, the budgets and the ledger: an endpoint's figures are its own to make up.
AGENT_MODEL_MAX_REPORTED_TOKENS = env.int(
    "AGENT_MODEL_MAX_REPORTED_TOKENS", default=AGENT_DEFAULTS["AGENT_MODEL_MAX_REPORTED_TOKENS"], validate=Range(min=1)
)
# Model endpoints on loopback or private addresses (a self-hosted vLLM on the LAN,
# a model on the developer's machine). Link-local and cloud metadata addresses
# are refused whatever this says (sandboxes/agent/endpoint_addresses.py).
MODEL_ENDPOINT_ALLOW_PRIVATE = env.bool("MODEL_ENDPOINT_ALLOW_PRIVATE", default=DEBUG)
# Seconds each connect and read of "Test connection" may wait (it makes two or three calls, from the
# web process)...
MODEL_ENDPOINT_CHECK_TIMEOUT = env.float("MODEL_ENDPOINT_CHECK_TIMEOUT", default=10.0, validate=Range(min=0.5, max=60))
# ...and the whole test at most this long, however the endpoint answers (a byte every few seconds
# never trips a per-read timeout): past it the verdict is "timeout" and the web thread is free.
MODEL_ENDPOINT_CHECK_DEADLINE = env.float("MODEL_ENDPOINT_CHECK_DEADLINE", default=30.0, validate=Range(min=1, max=300))
# Tests one workspace may start a minute, whoever clicks (each may hold a web thread until the deadline).
MODEL_ENDPOINT_CHECKS_PER_MINUTE = env.int("MODEL_ENDPOINT_CHECKS_PER_MINUTE", default=6, validate=Range(min=1))
AGENT_DEMO_TYPING_DELAY = env.float(
    "AGENT_DEMO_TYPING_DELAY", default=AGENT_DEFAULTS["AGENT_DEMO_TYPING_DELAY"], validate=Range(min=0, max=1)
)  # s per piece
