"""Evaluations: the suites a workspace uploads (a JSON Lines task file, and a zip of the input files
its tasks name). A file past a bound is refused with a sentence saying which, and nothing is stored."""

from marshmallow.validate import Range

from config.settings.agent import AGENT_MODEL_RETRIES, AGENT_MODEL_TIMEOUT
from config.settings.base import env
from config.settings.celery_channels import CELERY_BEAT_SCHEDULE

# The task file itself (JSON Lines, or the reference package's JSON array of tasks).
EVALUATION_SUITE_MAX_BYTES = env.int("EVALUATION_SUITE_MAX_BYTES", default=5 * 1024 * 1024, validate=Range(min=1024))
EVALUATION_SUITE_MAX_TASKS = env.int("EVALUATION_SUITE_MAX_TASKS", default=500, validate=Range(min=1))
# The input files the tasks name, all together once unpacked (the zip's own size is bounded by this too).
EVALUATION_SUITE_FILES_MAX_BYTES = env.int(
    "EVALUATION_SUITE_FILES_MAX_BYTES", default=50 * 1024 * 1024, validate=Range(min=0)
)

# A plain-mode task still in flight this long after it was released lost its worker (it died, or the
# broker lost the message): a sweep fails it, saying so, and releases the evaluation's next tasks.
# The default is three times the longest a completion may take (each attempt's timeout, all retries).
EVALUATION_PLAIN_TASK_STALE_SECONDS = env.float(
    "EVALUATION_PLAIN_TASK_STALE_SECONDS",
    default=3 * (AGENT_MODEL_RETRIES + 1) * AGENT_MODEL_TIMEOUT,
    validate=Range(min=1),
)
EVALUATION_PLAIN_SWEEP_SECONDS = 60.0
CELERY_BEAT_SCHEDULE["evaluations-fail-stale-plain-tasks"] = {
    "task": "creations.evaluations.tasks.fail_stale_plain_tasks",
    "schedule": EVALUATION_PLAIN_SWEEP_SECONDS,
    "options": {"expires": EVALUATION_PLAIN_SWEEP_SECONDS},  # no pile-up while no worker is up
}
