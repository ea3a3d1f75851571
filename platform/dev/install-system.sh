#!/usr/bin/env bash
# Installs and starts the system services Atelier needs on a Debian bookworm
# machine without systemd. Idempotent: anything already installed or running
# is left alone. Every system dependency of the project is listed here, once.
#   usage: install-system.sh [postgres|redis|docker|media|browser|all]...
set -euo pipefail

log() { printf '\033[1m[install]\033[0m %s\n' "$*"; }
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

as_postgres() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else sudo -u postgres "$@"; fi
}

APT_UPDATED=""
apt_install() {
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -z "$APT_UPDATED" ]; then $SUDO apt-get update -qq; APT_UPDATED=1; fi
  log "apt-get install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local secs=$1 what=$2; shift 2
  for _ in $(seq 1 $((secs * 4))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.25; done
  echo "timed out waiting for $what" >&2; return 1
}

install_postgres() {
  apt_install postgresql
  local pgver
  pgver=$(ls /usr/lib/postgresql | sort -V | tail -1)
  if ! pg_lsclusters -h 2>/dev/null | grep -q online; then
    log "starting PostgreSQL $pgver"
    $SUDO pg_ctlcluster "$pgver" main start
  fi
  wait_for 30 postgres as_postgres psql -qtAc 'select 1'
  # This cluster serves only the test suite (`make run` keeps its data in SQLite): PostgreSQL's
  # non-durable settings, which lose data only if the machine itself crashes. A transactional test's
  # flush (TRUNCATE of every table) took four times as long waiting for the disk.
  as_postgres psql -qtAc "alter system set fsync = off" \
    -c "alter system set synchronous_commit = off" \
    -c "alter system set full_page_writes = off" \
    -c "select pg_reload_conf()" >/dev/null
  # A dedicated role for the test suite (superuser so it can create test databases).
  as_postgres psql -qtAc "select 1 from pg_roles where rolname='atelier'" | grep -q 1 ||
    as_postgres psql -qc "create role atelier login superuser password 'atelier'"
  as_postgres psql -qtAc "select 1 from pg_database where datname='atelier'" | grep -q 1 ||
    as_postgres psql -qc "create database atelier owner atelier"
}

install_redis() {
  apt_install redis-server
  if ! redis-cli -p 6379 ping >/dev/null 2>&1; then
    log "starting Redis on 127.0.0.1:6379"
    redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no \
      --logfile /var/log/redis-atelier.log
    wait_for 15 redis redis-cli -p 6379 ping
  fi
}

install_docker() {
  if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
    log "adding bookworm-backports (for a current gVisor)"
    echo "deb http://deb.debian.org/debian bookworm-backports main" | $SUDO tee /etc/apt/sources.list.d/backports.list >/dev/null
    APT_UPDATED=""
  fi
  apt_install docker.io iptables iproute2 mmdebstrap
  if ! dpkg-query -W -f='${Version}' runsc 2>/dev/null | grep -q '^0.0~2024'; then
    [ -n "$APT_UPDATED" ] || { $SUDO apt-get update -qq; APT_UPDATED=1; }
    log "apt-get install -t bookworm-backports runsc"
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq -t bookworm-backports runsc >/dev/null
  fi
  # Register gVisor. --network=host is needed on VMs where gVisor's netstack
  # refuses the root network namespace; see platform/sandbox/README.md.
  local want='{"runtimes": {"runsc": {"path": "/usr/bin/runsc", "runtimeArgs": ["--network=host"]}}}'
  local changed=""
  if ! grep -qs '"runsc"' /etc/docker/daemon.json; then
    $SUDO mkdir -p /etc/docker
    echo "$want" | $SUDO tee /etc/docker/daemon.json >/dev/null
    changed=1
  fi
  if ! docker info >/dev/null 2>&1; then
    # A dockerd killed hard leaves pid files that stop the next one from starting.
    for pidfile in /var/run/docker.pid /var/run/docker/containerd/containerd.pid; do
      if [ -f "$pidfile" ] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then $SUDO rm -f "$pidfile"; fi
    done
    log "starting dockerd"
    $SUDO sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
    wait_for 60 dockerd docker info
  elif [ -n "$changed" ]; then
    $SUDO pkill -HUP dockerd; sleep 1
  fi
  docker info --format '{{json .Runtimes}}' | grep -q runsc || { echo "runsc runtime not registered" >&2; exit 1; }
  # The sandboxes' low-weight parent cgroup is the worker's to prepare as it starts
  # (sandboxes/cpu_priority.py): nothing to do for it here.
}

install_browser() {
  apt_install chromium chromium-driver libatomic1 fonts-dejavu-core
}

install_media() {
  # Tools the tests use to make and measure sample media. The platform itself
  # needs none of them on the host: previews are made inside a sandbox.
  apt_install ffmpeg poppler-utils fluidsynth fluid-soundfont-gm
}

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(all)
for t in "${targets[@]}"; do
  case "$t" in
    postgres) install_postgres ;;
    redis) install_redis ;;
    docker) install_docker ;;
    browser) install_browser ;;
    media) install_media ;;
    all) install_postgres; install_redis; install_docker; install_media; install_browser ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
done
