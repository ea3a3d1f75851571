"""The wheels and uv an image build installs, served on the loopback for the length of the build
(sandboxes/build_packages.py); the builds that read them are tested in test_image.py and
tests/platform/test_images.py."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from sandboxes.build_packages import LOOPBACK, engine_is_on_this_machine, packages_served, port_for
from sandboxes.image import ImageBuildError, docker_build

HERE = "http+docker://localhost"  # the Docker SDK's URL for an engine's socket on this machine


@pytest.fixture
def packages(tmp_path: Path) -> Path:
    folder = tmp_path / "packages"
    folder.mkdir()
    (folder / "pillow-12.0.0-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"PK\x03\x04wheel")
    (folder / "uv").write_bytes(b"\x7fELFinstaller")
    (tmp_path / "secret.txt").write_text("not served")
    return folder


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - our own loopback server
        body: bytes = response.read()
        return body


def test_a_build_reads_the_listing_the_wheels_and_uv_only_while_it_runs(packages: Path) -> None:
    with packages_served(packages, engine_url=HERE) as url:
        assert url.startswith(f"http://{LOOPBACK}:")
        listing = fetch(url + "/").decode()
        assert 'href="pillow-12.0.0-cp311-cp311-manylinux_2_28_x86_64.whl"' in listing  # what --find-links reads
        assert fetch(url + "/uv") == b"\x7fELFinstaller"
        with pytest.raises(urllib.error.HTTPError) as outside:
            fetch(url + "/../secret.txt")
        assert outside.value.code == 404
        with pytest.raises(urllib.error.HTTPError) as written:
            urllib.request.urlopen(urllib.request.Request(url + "/uv", data=b"x", method="PUT"), timeout=10)  # noqa: S310
        assert written.value.code == 501
    with pytest.raises(urllib.error.URLError):
        fetch(url + "/uv")


def test_the_same_packages_get_the_same_url_so_docker_keeps_the_install_step_cached(
    packages: Path, tmp_path: Path
) -> None:
    with packages_served(packages, engine_url=HERE) as first:
        pass
    with packages_served(packages, engine_url=HERE) as second:
        pass
    assert first == second == f"http://{LOOPBACK}:{port_for(packages)}"
    other = tmp_path / "other"
    other.mkdir()
    (other / "uv").write_bytes(b"\x7fELFanother installer")
    assert port_for(other) != port_for(packages)


def test_when_that_port_is_taken_the_packages_are_served_on_another(packages: Path) -> None:
    with socket.socket() as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past another test's closed connections
        taken.bind((LOOPBACK, port_for(packages)))
        taken.listen()
        with packages_served(packages, engine_url=HERE) as url:
            assert url != f"http://{LOOPBACK}:{port_for(packages)}"
            assert fetch(url + "/uv") == b"\x7fELFinstaller"


@pytest.mark.parametrize(
    ("engine_url", "here"),
    [
        (HERE, True),
        ("http://127.0.0.1:2375", True),
        ("https://localhost:2376", True),
        ("http://[::1]:2375", True),
        ("https://192.0.2.10:2376", False),  # another host over TCP (a documentation address)
        ("https://docker.example.org:2376", False),
        ("http+docker://ssh", False),  # another host over SSH
    ],
)
def test_only_an_engine_on_this_machine_is_given_packages_on_its_loopback(engine_url: str, here: bool) -> None:
    assert engine_is_on_this_machine(engine_url) is here


def test_a_build_on_another_hosts_engine_is_refused_before_it_starts_and_says_where_to_run_it(
    packages: Path, tmp_path: Path
) -> None:
    context = tmp_path / "context"
    context.mkdir()
    (context / "Dockerfile").write_text("FROM scratch\n")
    elsewhere = SimpleNamespace(api=SimpleNamespace(base_url="https://192.0.2.10:2376"))  # never contacted

    with pytest.raises(ImageBuildError) as refused:
        docker_build(elsewhere, context, "atelier-test:never", "base", print, labels={}, packages=packages)  # type: ignore[arg-type]

    assert "https://192.0.2.10:2376 is not this machine's" in str(refused.value)
    assert "run the build on that engine's host" in str(refused.value)
