"""docker-compose.yml (and the worker-host file) is a valid compose file that runs the platform as
the platform needs: secrets from the environment, health checks, the worker's engine and cgroups,
the S3 store, data on volumes. tests/platform/test_images.py starts its services from the images."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from sandboxes.agent.config import DEFAULTS as AGENT_DEFAULTS
from tests.platform.compose_files import (
    APP_SERVICES,
    MAIN_FILE,
    ROOT,
    WORKER_HOST_FILE,
    MissingVariable,
    interpolate,
    load,
    references,
    service_environment,
    strings,
    validate,
)

SECRETS = (
    "SECRET_KEY",
    "FIELD_ENCRYPTION_KEYS",
    "POSTGRES_PASSWORD",
    "REDIS_PASSWORD",
    "S3_ACCESS_KEY_ID",
    "S3_SECRET_ACCESS_KEY",
)
VARIABLES = {
    **{name: f"{name.lower()}-given-{index}" for index, name in enumerate(SECRETS)},
    "SITE_HOST": "atelier.example.net",
    "ARTIFACT_HOST": "atelier-files.example.net",
    "SANDBOX_HOST_ID": "worker-1",
    "MAIN_HOST": "10.0.0.5",
    "EMAIL_HOST": "smtp.example.net",
}


@pytest.fixture(scope="module")
def main() -> dict[str, Any]:
    return load(MAIN_FILE)


@pytest.fixture(scope="module")
def worker_host() -> dict[str, Any]:
    return load(WORKER_HOST_FILE)


def _every_string_interpolated(data: Any, variables: dict[str, str]) -> None:
    for value in strings(data):
        interpolate(value, variables)


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_the_compose_files_are_valid_by_the_compose_specification(path: Path) -> None:
    result = validate(path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "validation done" in result.stdout


def test_a_misspelt_health_check_is_refused_by_that_validation(tmp_path: Path) -> None:
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(MAIN_FILE.read_text().replace("interval: 15s", "intervl: 15s", 1))
    result = validate(broken)
    assert result.returncode != 0
    assert "$.services.web.healthcheck" in result.stdout
    assert "intervl" in result.stdout


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_every_service_has_a_health_check_and_comes_back_after_a_failure(path: Path) -> None:
    services = load(path)["services"]
    for name, service in services.items():
        check = service.get("healthcheck") or {}
        assert check.get("test"), f"{name} has no health check"
        assert not check.get("disable"), f"{name}'s health check is off"
        assert check["test"][0] in {"CMD", "CMD-SHELL"}, name
        assert service.get("restart") == "unless-stopped", name


def test_web_worker_and_beat_start_once_postgres_redis_and_the_store_are_healthy(main: dict[str, Any]) -> None:
    for name in APP_SERVICES:
        depends = main["services"][name]["depends_on"]
        assert depends == {dep: {"condition": "service_healthy"} for dep in ("postgres", "redis", "s3")}, name


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_compose_refuses_to_start_while_any_secret_is_unset(path: Path) -> None:
    data = load(path)
    _every_string_interpolated(data, VARIABLES)  # all set: fine
    for secret in SECRETS:
        with pytest.raises(MissingVariable, match=f"^{secret}: set {secret}"):
            _every_string_interpolated(data, {**VARIABLES, secret: ""})


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_no_secret_is_written_in_the_files_or_given_a_default(path: Path) -> None:
    data = load(path)
    for value in strings(data):
        for reference in references(value):
            if reference.name in SECRETS:
                assert reference.op != ":-", f"{reference.name} has a default in {value!r}"
    for name, service in data["services"].items():
        for key, value in (service.get("environment") or {}).items():
            if re.search(r"KEY|SECRET|PASSWORD|TOKEN|AUTH", key):
                assert re.fullmatch(r"(\$\{[A-Z0-9_]+(:\?[^}]*)?\})+", str(value)), f"{name}: {key} is written out"
            if "://" in str(value) and "@" in str(value):  # credentials in a URL: only the variables
                userinfo = str(value).split("://", 1)[1].split("@", 1)[0]
                assert re.fullmatch(r"[a-z]*:\$\{[A-Z_]+(:\?[^}]*)?\}", userinfo), f"{name}: {key} has a password"


def test_the_secrets_given_reach_the_platform_and_its_services(main: dict[str, Any]) -> None:
    services = main["services"]
    app = service_environment(services["web"], VARIABLES)
    assert app["SECRET_KEY"] == VARIABLES["SECRET_KEY"]
    assert app["FIELD_ENCRYPTION_KEYS"] == VARIABLES["FIELD_ENCRYPTION_KEYS"]
    database = urlsplit(app["DATABASE_URL"])
    postgres = service_environment(services["postgres"], VARIABLES)
    assert (database.hostname, database.port, database.path) == ("postgres", 5432, f"/{postgres['POSTGRES_DB']}")
    assert (database.username, database.password) == (postgres["POSTGRES_USER"], postgres["POSTGRES_PASSWORD"])
    redis = urlsplit(app["REDIS_URL"])
    assert (redis.hostname, redis.port, redis.password) == ("redis", 6379, VARIABLES["REDIS_PASSWORD"])
    redis_env = service_environment(services["redis"], VARIABLES)
    assert redis_env["REDIS_PASSWORD"] == redis_env["REDISCLI_AUTH"] == VARIABLES["REDIS_PASSWORD"]
    assert "--requirepass" in " ".join(services["redis"]["command"])


def test_web_worker_and_beat_run_one_image_with_one_environment(main: dict[str, Any]) -> None:
    services = main["services"]
    web, worker, beat = (services[name] for name in APP_SERVICES)
    assert web["image"] == worker["image"] == beat["image"] == "${ATELIER_IMAGE:-atelier-platform:latest}"
    assert web["environment"] == worker["environment"] == beat["environment"]
    assert len({json.dumps(services[name]["command"]) for name in APP_SERVICES}) == 3
    assert all(services[name]["pull_policy"] == "never" for name in (*APP_SERVICES, "s3"))


def test_only_the_worker_has_the_docker_socket_and_the_hosts_cgroups(main: dict[str, Any]) -> None:
    services = main["services"]
    worker = services["worker"]
    assert "/var/run/docker.sock:/var/run/docker.sock" in worker["volumes"]
    assert "/sys/fs/cgroup:/sys/fs/cgroup" in worker["volumes"]  # writable: freezing, the parent group
    assert (worker["pid"], worker["cgroup"], worker["user"]) == ("host", "host", "root")
    assert service_environment(worker, VARIABLES)["SANDBOX_CGROUP_PARENT"] == "/atelier-sandboxes"
    assert interpolate(worker["hostname"], VARIABLES) == "worker-1"  # its identity among the hosts
    with pytest.raises(MissingVariable, match="SANDBOX_HOST_ID"):
        interpolate(worker["hostname"], {})
    for name, service in services.items():
        if name != "worker":
            mounts = " ".join(str(volume) for volume in service.get("volumes", []))
            assert "docker.sock" not in mounts, name
            assert "/sys/fs/cgroup" not in mounts, name
            assert "pid" not in service, name
            assert service.get("user") != "root", name


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_the_worker_prepares_the_sandboxes_low_weight_cgroup_itself(path: Path) -> None:
    """As it starts, the worker makes the sandboxes' parent group and lowers its weight
    (sandboxes/cpu_priority.py; tests/platform/test_images.py runs it): it needs root, the host's
    cgroup file system mounted writable and the host's cgroup view, and must start as a worker."""
    worker = load(path)["services"]["worker"]
    assert worker["user"] == "root"
    (mount,) = [str(v) for v in worker["volumes"] if str(v).split(":")[1] == "/sys/fs/cgroup"]
    assert mount == "/sys/fs/cgroup:/sys/fs/cgroup"  # no ":ro"
    assert worker["cgroup"] == "host"
    assert not {"cap_drop", "read_only", "cgroup_parent"} & set(worker)
    assert worker["command"][worker["command"].index("celery") :][:4] == ["celery", "-A", "config", "worker"]
    parent = service_environment(worker, VARIABLES).get("SANDBOX_CGROUP_PARENT", "/atelier-sandboxes")
    assert parent == "/atelier-sandboxes"  # a path: made a slice by the worker under Docker's systemd driver
    offline = service_environment(worker, VARIABLES).get("SANDBOX_OFFLINE_CGROUP_PARENT", "/atelier_offline")
    assert offline == "/atelier_offline"  # previews' group, apart from the agents' (its own top slice under systemd)


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_a_stopping_worker_is_given_the_time_to_finish_its_runs(path: Path) -> None:
    grace = load(path)["services"]["worker"]["stop_grace_period"]
    assert re.fullmatch(r"\d+m", grace), grace
    assert int(grace[:-1]) * 60 > AGENT_DEFAULTS["AGENT_MAX_WALL_SECONDS"]  # compose's default is 10 s


def test_web_and_beat_are_locked_down_and_web_listens_for_the_local_tls_proxy(main: dict[str, Any]) -> None:
    services = main["services"]
    for name in ("web", "beat"):
        service = services[name]
        assert service["read_only"] is True, name
        assert service["tmpfs"] == ["/tmp"], name
        assert service["cap_drop"] == ["ALL"], name
        assert service["security_opt"] == ["no-new-privileges:true"], name
    assert services["web"]["ports"] == ["${WEB_ADDRESS:-127.0.0.1}:8000:8000"]


def test_client_addresses_come_from_the_trusted_proxy_never_from_the_first_forwarded_address(
    main: dict[str, Any],
) -> None:
    """daphne's --proxy-headers takes X-Forwarded-For's first address, which the client writes;
    the platform reads the header from the right, believing only TRUSTED_PROXIES."""
    assert "--proxy-headers" not in main["services"]["web"]["command"][-1]
    trusted = service_environment(main["services"]["web"], VARIABLES)["TRUSTED_PROXIES"].split(",")
    assert trusted == [
        "172.16.0.0/12",
        "192.168.0.0/16",
    ]  # the gateway of compose's network, where the proxy comes from


def test_mail_goes_through_an_smtp_server_that_must_be_named(main: dict[str, Any]) -> None:
    app = service_environment(main["services"]["web"], VARIABLES)
    assert app["EMAIL_BACKEND"] == "django.core.mail.backends.smtp.EmailBackend"
    assert app["EMAIL_HOST"] == VARIABLES["EMAIL_HOST"]
    with pytest.raises(MissingVariable, match=r"^EMAIL_HOST: set EMAIL_HOST"):
        _every_string_interpolated(main, {**VARIABLES, "EMAIL_HOST": ""})


def test_storage_is_the_stacks_own_s3_store_with_the_same_credentials(main: dict[str, Any]) -> None:
    services = main["services"]
    app = service_environment(services["web"], VARIABLES)
    store = service_environment(services["s3"], VARIABLES)
    assert app["STORAGE_BACKEND"] == "s3"
    endpoint = urlsplit(app["S3_ENDPOINT_URL"])
    assert (endpoint.hostname, endpoint.port) == ("s3", 8333)
    assert "8333:8333" in services["s3"]["ports"][0]
    assert app["S3_BUCKET"]
    assert app["S3_REGION"]
    assert (app["S3_ACCESS_KEY_ID"], app["S3_SECRET_ACCESS_KEY"]) == (
        store["AWS_ACCESS_KEY_ID"],
        store["AWS_SECRET_ACCESS_KEY"],
    )


def test_the_data_of_postgres_redis_and_the_store_lives_on_named_volumes(main: dict[str, Any]) -> None:
    expected = {"postgres": "pgdata:/var/lib/postgresql/data", "redis": "redisdata:/data", "s3": "s3data:/data"}
    for name, mount in expected.items():
        assert main["services"][name]["volumes"] == [mount], name
        assert mount.split(":")[0] in main["volumes"]
    assert "--appendonly yes" in main["services"]["redis"]["command"][-1]  # queued runs survive a restart


def _variables_the_settings_read() -> set[str]:
    source = "".join(path.read_text() for path in (ROOT / "config" / "settings").glob("*.py"))
    return set(re.findall(r"\benv\.\w+\(\s*\"([A-Z0-9_]+)\"", source))


@pytest.mark.parametrize("path", [MAIN_FILE, WORKER_HOST_FILE], ids=lambda p: p.name)
def test_every_variable_given_to_the_platform_is_one_it_reads(path: Path) -> None:
    """A misspelt name would be ignored in silence, leaving the default in force."""
    known = _variables_the_settings_read()
    assert {"SECRET_KEY", "STORAGE_BACKEND", "SANDBOX_CGROUP_PARENT"} <= known
    services = load(path)["services"]
    for name in APP_SERVICES:
        if name in services:
            assert set(services[name]["environment"]) <= known, name


def test_the_settings_accept_the_platforms_environment_as_production(main: dict[str, Any]) -> None:
    """What the web, worker and beat processes see: every value valid (else start-up stops)."""
    environment = service_environment(main["services"]["web"], VARIABLES)
    code = (
        "import json; from django.conf import settings as s; default = s.STORAGES['default']; "
        "print(json.dumps({'debug': s.DEBUG, 'storage': default['BACKEND'], 'options': default.get('OPTIONS'),"
        " 'database': s.DATABASES['default']['HOST'], 'hosts': s.ALLOWED_HOSTS, 'proxy': s.SECURE_PROXY_SSL_HEADER,"
        " 'secure_cookies': s.SESSION_COOKIE_SECURE, 'cgroup': s.SANDBOX_CGROUP_PARENT}))"
    )
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "config.settings", **environment}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert seen["debug"] is False
    assert seen["secure_cookies"] is True
    assert seen["storage"] == "storages.backends.s3.S3Storage"
    assert seen["options"]["endpoint_url"] == "http://s3:8333"
    assert seen["options"]["bucket_name"] == "atelier"
    assert seen["options"]["access_key"] == VARIABLES["S3_ACCESS_KEY_ID"]
    assert seen["database"] == "postgres"
    assert set(seen["hosts"]) == {"atelier.example.net", "localhost", "atelier-files.example.net"}
    assert seen["proxy"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert seen["cgroup"] == "/atelier-sandboxes"


def test_a_worker_host_runs_the_same_worker_against_the_main_machines_services(
    main: dict[str, Any], worker_host: dict[str, Any]
) -> None:
    ours, theirs = dict(main["services"]["worker"]), dict(worker_host["services"]["worker"])
    assert set(worker_host["services"]) == {"worker"}
    assert "depends_on" not in theirs  # the shared services run elsewhere
    ours.pop("depends_on")
    moved = {"DATABASE_URL", "REDIS_URL", "S3_ENDPOINT_URL"}
    ours_env, theirs_env = ours.pop("environment"), theirs.pop("environment")
    assert ours == theirs
    assert {k: v for k, v in ours_env.items() if k not in moved} == {
        k: v for k, v in theirs_env.items() if k not in moved
    }
    main_env = service_environment(main["services"]["worker"], VARIABLES)
    host_env = service_environment(worker_host["services"]["worker"], VARIABLES)
    published = {urlsplit(main_env[key]).port: key for key in moved}
    for key in moved:
        there = urlsplit(host_env[key])
        assert there.hostname == VARIABLES["MAIN_HOST"], key
        assert (there.port, there.path, there.password) == (
            urlsplit(main_env[key]).port,
            urlsplit(main_env[key]).path,
            urlsplit(main_env[key]).password,
        ), key
    for service, port in (("postgres", 5432), ("redis", 6379), ("s3", 8333)):
        assert published[port]
        assert main["services"][service]["ports"] == [f"${{SHARED_ADDRESS:-127.0.0.1}}:{port}:{port}"]
