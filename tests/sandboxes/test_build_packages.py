"""The wheels and uv an image build installs, served on the loopback for the length of the build
(sandboxes/build_packages.py); the builds that read them are tested in test_image.py and
tests/platform/test_images.py."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from sandboxes.build_packages import LOOPBACK, packages_served, port_for


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
    with packages_served(packages) as url:
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
    with packages_served(packages) as first:
        pass
    with packages_served(packages) as second:
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
        with packages_served(packages) as url:
            assert url != f"http://{LOOPBACK}:{port_for(packages)}"
            assert fetch(url + "/uv") == b"\x7fELFinstaller"
