"""The platform's development stack: what the tests and the benchmarks start, on this machine, to
exercise the real thing. Each launcher is a context manager (or has `start()`/`stop()`), and what
it starts is stopped when its block ends, however it ends.

- `databases`: a PostgreSQL database of a benchmark's own, created and dropped (`throwaway_database`),
  and the `database_url` that points a stack's processes at a database; `migrated_template`: the
  migrated database that test and benchmark databases are copied from.
- `redis_server`: a throwaway redis-server on a free port (`RedisServer`), and pointing this process
  (Django's settings, Celery, the channel layers) at it.
- `scripted_model` (with `model_script`): an OpenAI-compatible model server that plays a script.
- `stack`: the platform's own processes — daphne, Celery workers and beat — as processes of their
  own, with the one environment they all share (`PROCESS_ENV`, `stack_env`): `stack_running`.
- `s3`: SeaweedFS, an S3-compatible server (`seaweedfs_running`).
- `docker_engine`: a second Docker + gVisor engine, the stand-in for a second worker host.
- `containers`: the sandbox containers a run left on an engine; `samples`: small real media files.
- `processes`, `ports`: starting a program, waiting until it is ready, and free ports.

Nothing here imports pytest, tests/ or bench/ (pyproject.toml's import contracts): a launcher that
finds something missing on this machine raises `Missing`, and the tests' fixtures decide to skip.
"""


class Missing(RuntimeError):
    """Something a launcher needs is not on this machine; the message says what (and how to get it)."""
