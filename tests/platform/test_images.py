"""The production images build here, with no registry, and run docker-compose.yml's services:
each reaches its health check, the web answers, files go to the S3 store, and a worker in its
container freezes an idle sandbox as the sizing in platform/README.md assumes and prepares the
sandboxes' low-weight cgroup as the live stream needs."""

from __future__ import annotations

import copy
import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import boto3
import docker
import pytest
from docker.models.containers import Container

from config.platform_image import PlatformImages, build_platform_images
from sandboxes.cpu_priority import OFFLINE, Engine
from sandboxes.image import ensure_offline_base
from tests.platform.compose_files import MAIN_FILE, load, service_environment
from tests.platform.containers import published_port, remove, run_service, wait_healthy
from tests.support import free_port, require
from tests.support.cgroups import cpu_cgroup_of, own_cgroup_parent, sandbox_pid_under, weight_of

pytestmark = [pytest.mark.docker, pytest.mark.services, pytest.mark.timeout(900)]

# The TLS proxy's part of `check --deploy` (platform/README.md, TLS): it redirects to HTTPS and sends HSTS.
CHECKS_LEFT_TO_THE_PROXY = {"security.W004", "security.W008"}
# The periodic janitor would also sweep other tests' sandboxes on this engine.
TEST_ENVIRONMENT = {"SANDBOX_JANITOR_INTERVAL": "86400"}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load(MAIN_FILE)


@pytest.fixture
def client() -> docker.DockerClient:
    return docker.from_env(timeout=120)


@pytest.fixture
def started(client: docker.DockerClient) -> Iterator[list[Any]]:
    containers: list[Any] = []
    yield containers
    for container in containers:
        remove(container)


def _test_database_url() -> str:
    from django.conf import settings

    db = settings.DATABASES["default"]
    return f"postgres://{db['USER']}:{db['PASSWORD']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _on_port(service: dict[str, Any], port: int) -> dict[str, Any]:
    """The web service listening on a free loopback port of this machine instead of 8000."""
    moved = copy.deepcopy(service)
    moved["command"][-1] = moved["command"][-1].replace("-b 0.0.0.0 -p 8000", f"-b 127.0.0.1 -p {port}")
    moved["healthcheck"]["test"] = [
        part.replace("localhost:8000", f"localhost:{port}") for part in moved["healthcheck"]["test"]
    ]
    return moved


def _run_in(container: Container, argv: list[str]) -> str:
    output = container.exec_run(argv).output
    assert isinstance(output, bytes)
    return output.decode().strip()


def _get(url: str, host: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"Host": host, "X-Forwarded-Proto": "https"})  # noqa: S310
    with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - a loopback http URL
        return response.status, response.read()


def test_the_images_are_built_from_the_offline_base_and_a_second_build_is_a_no_op(
    platform_images: PlatformImages, client: docker.DockerClient
) -> None:
    again = build_platform_images(offline=True, log=lambda _line: None)
    assert (again.platform.built, again.store.built) == (False, False)
    assert (again.platform.tag, again.store.tag) == (platform_images.platform.tag, platform_images.store.tag)
    from django.conf import settings

    base = client.images.get(ensure_offline_base(client, settings.SANDBOX_BUILD_CACHE_DIR, lambda _line: None))
    for tag in (again.platform.tag, again.store.tag):
        layers = client.images.get(tag).attrs["RootFS"]["Layers"]
        assert layers[: len(base.attrs["RootFS"]["Layers"])] == base.attrs["RootFS"]["Layers"], tag


def test_the_platform_image_holds_the_project_and_none_of_a_checkouts_secrets(
    platform_images: PlatformImages, client: docker.DockerClient
) -> None:
    listing = client.containers.run(
        platform_images.platform.tag, ["sh", "-c", "ls /app; echo --; ls /app/var; echo --; id -un"], remove=True
    ).decode()
    app, var, user = (part.split() for part in listing.split("--\n"))
    assert set(app) == {"api", "atelier_cli", "config", "creations", "manage.py", "sandboxes", "static"} | {
        "templates",
        "var",
        "workspaces",
    }
    assert set(var) == {"media", "staticfiles"}  # no development secrets, no database file
    assert user == ["atelier"]


def test_the_platform_image_keeps_its_installed_packages_but_not_the_wheels_or_uv_they_came_from(
    platform_images: PlatformImages, client: docker.DockerClient
) -> None:
    tag = platform_images.platform.tag
    script = "ls -A /tmp; echo --; command -v uv || true; command -v pip || true; echo --; python -c 'import django'"
    listing = client.containers.run(tag, ["sh", "-c", f"{script} && echo imported"], remove=True).decode()
    left_in_tmp, installers, imported = (part.split() for part in listing.split("--\n"))
    assert (left_in_tmp, installers, imported) == ([], [], ["imported"])
    steps = [step.get("CreatedBy") or "" for step in client.api.history(tag)]
    assert not [step for step in steps if "wheels" in step]  # no layer the wheels were copied into


def test_check_deploy_with_the_compose_environment_leaves_only_the_tls_proxys_part(
    platform_images: PlatformImages,
    client: docker.DockerClient,
    compose: dict[str, Any],
    production_variables: dict[str, str],
) -> None:
    environment = service_environment(compose["services"]["web"], production_variables)
    result = client.containers.run(
        platform_images.platform.tag,
        ["python", "manage.py", "check", "--deploy"],
        environment=environment,
        remove=True,
        stderr=True,
    ).decode()
    reported = {line.split(")")[0].split("(")[-1] for line in result.splitlines() if line.startswith("?: (")}
    assert reported == CHECKS_LEFT_TO_THE_PROXY, result


@pytest.mark.django_db(transaction=True)
def test_the_stacks_services_start_healthy_and_store_files_in_the_s3_store(
    platform_images: PlatformImages,
    client: docker.DockerClient,
    compose: dict[str, Any],
    production_variables: dict[str, str],
    own_redis: str,
    started: list[Any],
) -> None:
    services = compose["services"]
    image = platform_images.platform.tag
    variables = production_variables
    store = run_service(client, services["s3"], image=platform_images.store.tag, variables=variables,
                        host_network=False, publish=8333)  # fmt: skip
    started.append(store)
    endpoint = f"http://127.0.0.1:{published_port(store, 8333)}"
    # The tests' PostgreSQL and Redis in place of the stack's own; everything else as compose has it.
    shared = {"DATABASE_URL": _test_database_url(), "REDIS_URL": own_redis, "S3_ENDPOINT_URL": endpoint}
    shared |= TEST_ENVIRONMENT
    port = free_port()
    definitions = {"web": _on_port(services["web"], port), "worker": services["worker"], "beat": services["beat"]}
    app = {
        name: run_service(client, service, image=image, variables=variables, environment=shared)
        for name, service in definitions.items()
    }
    started.extend(app.values())
    for container in started:
        wait_healthy(container)

    status, body = _get(f"http://127.0.0.1:{port}/healthz", "atelier.example.net")
    assert status == 200
    assert json.loads(body)["ok"] is True
    status, page = _get(f"http://127.0.0.1:{port}/accounts/login/", "atelier.example.net")
    assert status == 200
    assert b"<form" in page
    stylesheet = page.split(b'href="/static/', 1)[1].split(b'"', 1)[0].decode()
    assert _get(f"http://127.0.0.1:{port}/static/{stylesheet}", "atelier.example.net")[0] == 200
    users = {name: _run_in(container, ["id", "-u"]) for name, container in app.items()}
    assert users == {"web": "10001", "beat": "10001", "worker": "0"}  # root only for the socket and cgroups

    saved = app["web"].exec_run(
        ["python", "manage.py", "shell", "-c",
         ("from django.core.files.base import ContentFile; from django.core.files.storage import default_storage;"
         " print(default_storage.save('deploy-check.txt', ContentFile(b'kept in the store')))")],
    )  # fmt: skip
    output = saved.output
    assert isinstance(output, bytes)
    assert saved.exit_code == 0, output.decode()
    name = output.decode().strip().splitlines()[-1]
    environment = service_environment(services["web"], variables)
    s3 = boto3.client(
        "s3", endpoint_url=endpoint, region_name=environment["S3_REGION"],
        aws_access_key_id=variables["S3_ACCESS_KEY_ID"], aws_secret_access_key=variables["S3_SECRET_ACCESS_KEY"],
    )  # fmt: skip
    assert s3.get_object(Bucket=environment["S3_BUCKET"], Key=name)["Body"].read() == b"kept in the store"


def test_a_worker_in_its_container_freezes_an_idle_sandbox(
    platform_images: PlatformImages,
    client: docker.DockerClient,
    compose: dict[str, Any],
    production_variables: dict[str, str],
    sandbox_image: str,
    started: list[Any],
) -> None:
    """Through the host's process and cgroup views compose gives it; else idle sandboxes cost CPU."""
    script = (
        "import django; django.setup(); from sandboxes.docker_runtime import start_sandbox;"
        " box = start_sandbox({'atelier.owner': 'tests', 'atelier.run_id': 'tests'});"
        " box.run_command('true', timeout=60); print('frozen' if box.frozen else 'running'); box.stop()"
    )
    worker = run_service(
        client,
        compose["services"]["worker"],
        image=platform_images.platform.tag,
        variables=production_variables,
        environment={"DJANGO_SETTINGS_MODULE": "config.settings", "SANDBOX_IMAGE": sandbox_image},
        command=["python", "-c", script],
        host_network=False,  # the stack's own network, as compose runs it: the egress policy through a helper
    )
    started.append(worker)
    outcome = worker.wait(timeout=300)
    output = worker.logs().decode()
    assert outcome["StatusCode"] == 0, output
    assert output.strip().splitlines()[-1] == "frozen", output


@pytest.mark.django_db(transaction=True)
def test_a_worker_in_its_container_prepares_the_sandboxes_low_weight_cgroup_and_starts_sandboxes_under_it(
    platform_images: PlatformImages,
    client: docker.DockerClient,
    compose: dict[str, Any],
    production_variables: dict[str, str],
    sandbox_image: str,
    own_redis: str,
    started: list[Any],
) -> None:
    """compose's worker, with its own command and the host's cgroups as compose mounts them: as
    it starts it makes the group (a fresh name here) with the low weight and says so once; its
    warm sandbox lands under it."""
    engine = Engine.from_info(client.info())
    require(engine.driver == "cgroupfs", "Docker's cgroupfs driver (with systemd the worker only checks)")
    with own_cgroup_parent() as parent, own_cgroup_parent() as offline_parent:
        worker = run_service(
            client,
            compose["services"]["worker"],
            image=platform_images.platform.tag,
            variables=production_variables,
            environment={
                "DATABASE_URL": _test_database_url(),
                "REDIS_URL": own_redis,
                "SANDBOX_CGROUP_PARENT": parent,
                "SANDBOX_OFFLINE_CGROUP_PARENT": offline_parent,
                "SANDBOX_IMAGE": sandbox_image,
                "WORKER_CONCURRENCY": "1",
                "SANDBOX_POOL_SIZE": "1",  # a sandbox the worker starts as it becomes ready
                "SANDBOX_NETWORK_MODE": "none",
                "SANDBOX_FREEZE_IDLE": "false",  # removed with the worker below, never waiting on a thaw
                **TEST_ENVIRONMENT,
            },
        )
        started.append(worker)
        wait_healthy(worker)
        output = worker.logs().decode(errors="replace")
        lines = [line for line in output.splitlines() if "sandboxes.cpu_priority" in line]
        assert len(lines) == 2, output
        assert f"INFO sandboxes.cpu_priority sandboxes run at low CPU priority: cgroup {parent} (" in lines[0]
        assert "(created just now)" in lines[0]
        assert weight_of(engine, parent) == engine.low_weight
        assert f"previews and comparisons run at half a process's CPU priority: cgroup {offline_parent} (" in lines[1]
        assert weight_of(engine, offline_parent) == OFFLINE.weight_under(engine.version)
        pid = sandbox_pid_under(parent)
        assert cpu_cgroup_of(pid).startswith(f"{parent}/")
        remove(worker)
