"""Evaluations: the suites a workspace uploads (a JSON Lines task file, and a zip of the input files
its tasks name). A file past a bound is refused with a sentence saying which, and nothing is stored."""

from marshmallow.validate import Range

from config.settings.base import env

# The task file itself (JSON Lines, or the reference package's JSON array of tasks).
EVALUATION_SUITE_MAX_BYTES = env.int("EVALUATION_SUITE_MAX_BYTES", default=5 * 1024 * 1024, validate=Range(min=1024))
EVALUATION_SUITE_MAX_TASKS = env.int("EVALUATION_SUITE_MAX_TASKS", default=500, validate=Range(min=1))
# The input files the tasks name, all together once unpacked (the zip's own size is bounded by this too).
EVALUATION_SUITE_FILES_MAX_BYTES = env.int(
    "EVALUATION_SUITE_FILES_MAX_BYTES", default=50 * 1024 * 1024, validate=Range(min=0)
)
