#!/usr/bin/env bash
# `make run`: the whole platform on one machine, in the foreground.
# Web (daphne, ASGI) + Celery worker with beat; Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/../.."

export DEBUG="${DEBUG:-true}"
# Loopback only unless told (BIND=0.0.0.0): a development server is not meant for the network.
BIND="${BIND:-127.0.0.1}"
PORT="${PORT:-8000}"
# Artifacts come from another origin, here another port of the same server: the
# platform answers at http://localhost:$PORT and http://127.0.0.1:$PORT alike.
ARTIFACT_PORT="${ARTIFACT_PORT:-$((PORT + 1))}"
export SITE_URL="${SITE_URL:-http://localhost:$PORT}"
export ARTIFACT_ORIGIN="${ARTIFACT_ORIGIN:-http://localhost:$ARTIFACT_PORT}"
PY=.venv/bin/python

log() { printf '\033[1m[atelier]\033[0m %s\n' "$*"; }

if ! .venv/bin/python - <<'PY' 2>/dev/null
import redis, os
redis.Redis.from_url(os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"), socket_connect_timeout=1).ping()
PY
then
  log "starting a local Redis on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no
fi

$PY manage.py migrate --noinput
$PY manage.py collectstatic --noinput -v 0

pids=()
cleanup() {
  trap - INT TERM EXIT
  log "stopping"
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup INT TERM EXIT

# The worker is batch work: at a lower CPU priority than daphne and Redis, a machine full of busy runs
# still streams their events live. It stores and announces every event, though, so it stays above the
# sandboxes it drives, whose cgroup weighs an eighth (see platform/sandbox/README.md, "CPU priority").
nice -n 5 .venv/bin/celery -A config worker --beat --loglevel INFO --schedule var/celerybeat-schedule &
pids+=($!)
.venv/bin/daphne -e "tcp:port=$PORT:interface=$BIND" -e "tcp:port=$ARTIFACT_PORT:interface=$BIND" config.asgi:application &
pids+=($!)

log "Atelier is running at http://localhost:$PORT/ (artifacts from $ARTIFACT_ORIGIN)"
log "Sign up at http://localhost:$PORT/accounts/signup/ — your personal workspace is ready at once."
log "Admin: .venv/bin/python manage.py createsuperuser, then http://localhost:$PORT/admin/"
log "Press Ctrl-C to stop."
wait -n "${pids[@]}"
