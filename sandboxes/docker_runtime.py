"""The Docker implementation of the sandbox protocol (gVisor `runsc` by default)."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import docker
import docker.errors

from sandboxes import files, snapshots
from sandboxes.container_spec import SandboxConfig, container_options
from sandboxes.cpu_burst import allow_cpu_burst
from sandboxes.docker_exec import ExecConnection
from sandboxes.egress_guard import egress_guard
from sandboxes.engine_client import engine_client
from sandboxes.engine_errors import ENGINE_UNANSWERED
from sandboxes.firewall import NetworkPolicyError, daemon_address
from sandboxes.freezer import Freezer
from sandboxes.network import ensure_network
from sandboxes.runtime import ByteSource, CommandResult, CopyOutReport, OutputCallback, SnapshotReport
from sandboxes.shell import PersistentShell, ShellUnavailable

logger = logging.getLogger(__name__)
EXIT_STATE_SETTLE_SECONDS = 5.0  # how long to wait for Docker to record a sandbox's end
STOP_WAIT_SECONDS = 30.0  # how long a second stop() waits for the first to remove the container
# exec() runs helpers whose replies are small (the editor's is JSON of at most 16,000
# characters): reading stops past this, so nothing in the sandbox can fill the worker's memory.
EXEC_OUTPUT_MAX_BYTES = 1024 * 1024

NAME_PREFIX = "atelier-"


class SandboxError(RuntimeError):
    """A sandbox could not be started or used; the message says why."""


class ExecOutputTooLarge(SandboxError):
    """A helper run with exec() printed more than EXEC_OUTPUT_MAX_BYTES."""


_unfreezable_logged = threading.Event()
_no_cpu_burst_logged = threading.Event()
_network_lock = threading.Lock()
_network_ready: set[tuple[str, str]] = set()  # (daemon, network name): each engine has its own networks


def _prepare_network(client: docker.DockerClient, config: SandboxConfig) -> str:
    """The network to attach: created once per process, its egress policy
    verified before every start (cached for seconds, restored if it drifted)."""
    if config.network_mode == "none":
        return "none"
    with _network_lock:
        key = (daemon_address(client), config.network.name)
        if key not in _network_ready:
            ensure_network(client, config.network)
            _network_ready.add(key)
    try:
        egress_guard(client, config.network, config.image).ensure()
    except NetworkPolicyError as exc:  # never start a sandbox whose egress is not policed
        raise SandboxError(f"the sandbox could not start: {exc}") from exc
    return config.network.name


def start_sandbox(
    labels: Mapping[str, str], *, config: SandboxConfig | None = None, name: str | None = None
) -> DockerSandbox:
    """Create and start a container, then its persistent shell."""
    config = config or SandboxConfig.from_settings()
    if config.runtime != "runsc":
        logger.warning(
            "SANDBOX_RUNTIME=%s: sandboxes are NOT isolated by gVisor. Use this for development only.",
            config.runtime,
        )
    client = engine_client(timeout=int(config.start_timeout) + 30)
    network = _prepare_network(client, config)
    name = name or f"{NAME_PREFIX}{secrets.token_hex(6)}"
    try:
        container = client.containers.run(name=name, **container_options(config, labels, network))
    except docker.errors.ImageNotFound as exc:
        raise SandboxError(
            f"the sandbox image {config.image} is missing: run `python manage.py build_sandbox_image`"
        ) from exc
    except docker.errors.APIError as exc:
        raise SandboxError(f"the sandbox could not start: {exc.explanation or exc}") from exc
    sandbox = DockerSandbox(client, container.id, config, dict(labels), name)
    try:
        sandbox.start_shell()
    except Exception:
        sandbox.stop()
        raise
    return sandbox


class DockerSandbox:
    """One running container and its persistent shell."""

    def __init__(
        self, client: docker.DockerClient, container_id: str, config: SandboxConfig, labels: dict[str, str], name: str
    ) -> None:
        self._client = client
        self._api = client.api
        self.container_id = container_id
        self.name = name
        self.config = config
        self.labels = labels
        self.started_at = time.time()
        self._shell = PersistentShell(self._api, container_id, config.shell_limits())
        self._lock = threading.Lock()  # one command at a time in the shell
        self._stopped = False
        self._removed = threading.Event()
        # Frozen between commands while nothing of the agent's runs (sandboxes/freezer.py).
        self._freezer: Freezer | None = None
        self._freeze_lock = threading.Lock()
        self._frozen = False
        self._users = 0  # operations under way (a command, an exec, a copy): never frozen meanwhile

    @property
    def id(self) -> str:
        return self.container_id

    def start_shell(self) -> None:
        pid = self._sandbox_pid() if self.config.freeze_idle or self.config.cpu_burst else 0
        if self.config.cpu_burst:  # before the shell: starting it is the sandbox's first burst
            self._allow_cpu_burst(pid)
        try:
            self._shell.start(timeout=self.config.start_timeout)
        except ShellUnavailable as exc:
            raise SandboxError(str(exc)) from exc
        if self.config.freeze_idle:
            self._freezer = self._find_freezer(pid)
            with self._freeze_lock:
                self._freeze_if_idle()

    def _sandbox_pid(self) -> int:
        """The host pid of the container's process, whose cgroup is the sandbox's (0: unknown)."""
        try:
            return int(self._api.inspect_container(self.container_id)["State"].get("Pid") or 0)
        except docker.errors.APIError:
            return 0

    def _allow_cpu_burst(self, pid: int) -> None:
        if not allow_cpu_burst(pid, self.container_id) and not _no_cpu_burst_logged.is_set():
            _no_cpu_burst_logged.set()  # once per process: it holds for every sandbox of this worker
            logger.info(
                "sandboxes cannot burst above SANDBOX_CPUS here (SANDBOX_CPU_BURST needs write access to"
                " their cgroups and Linux 5.14 or later): a command starting processes may be throttled"
            )

    # -- freezing between commands -------------------------------------------
    def _find_freezer(self, pid: int) -> Freezer | None:
        freezer = Freezer.for_container(pid, self.container_id)
        if freezer is None and not _unfreezable_logged.is_set():
            _unfreezable_logged.set()  # once per process: it holds for every sandbox of this worker
            logger.info("sandbox cgroups cannot be frozen here (SANDBOX_FREEZE_IDLE needs write access to them)")
        return freezer

    @contextmanager
    def _in_use(self) -> Iterator[None]:
        """Awake while anything (a command, an exec, a copy) uses the sandbox;
        frozen again after the last use if nothing runs in it but the shell."""
        with self._freeze_lock:
            self._users += 1
            self._thaw()
        try:
            yield
        finally:
            with self._freeze_lock:
                self._users -= 1
                self._freeze_if_idle()

    def _freeze_if_idle(self) -> None:  # with _freeze_lock held
        if self._freezer is None or self._frozen or self._stopped or self._users or not self._shell.idle:
            return
        self._frozen = self._freezer.freeze()

    def _thaw(self) -> None:  # with _freeze_lock held
        if self._frozen and self._freezer is not None:
            self._freezer.thaw()
            self._frozen = False

    @property
    def frozen(self) -> bool:
        return self._frozen

    def rename(self, name: str) -> None:
        self._api.rename(self.container_id, name)
        self.name = name

    # -- the protocol ------------------------------------------------------
    def run_command(
        self, command: str, *, timeout: float | None = None, on_output: OutputCallback | None = None
    ) -> CommandResult:
        started = time.monotonic()
        with self._lock:
            if self._stopped:
                return _unavailable("The sandbox has been stopped.", started)
            with self._in_use():
                try:
                    return self._shell.run(command, timeout=timeout or self.config.command_timeout, on_output=on_output)
                except ShellUnavailable:
                    reason = self.exit_reason(settle_seconds=EXIT_STATE_SETTLE_SECONDS)
                    return _unavailable(f"The sandbox stopped ({reason}); no command can run.", started)

    def exec(self, argv: list[str], *, stdin: bytes | None = None, timeout: float = 60) -> tuple[int, bytes]:
        """Run a helper outside the shell. Its output is read up to EXEC_OUTPUT_MAX_BYTES:
        past that, ExecOutputTooLarge (and the connection is closed, which ends the helper's output)."""
        output = bytearray()
        with self._in_use():
            conn = ExecConnection.open(self._api, self.container_id, argv, stdin=stdin is not None)
            try:
                if stdin is not None:
                    conn.send(stdin)
                    conn.close_stdin()
                for _, payload in conn.frames(time.monotonic() + timeout):
                    output += payload
                    if len(output) > EXEC_OUTPUT_MAX_BYTES:
                        raise ExecOutputTooLarge(
                            f"{argv[0]} printed more than {EXEC_OUTPUT_MAX_BYTES} bytes; its output was not read"
                        )
            finally:
                conn.close()
        code = conn.exit_code()
        return (code if code is not None else -1), bytes(output)

    def write_files(self, files_to_write: Mapping[str, bytes], *, dest: str = "/testbed/input") -> None:
        archive = files.build_tar(files_to_write, self.config.copy_in_max_bytes)
        script = 'mkdir -p -- "$1" && exec tar -x --no-same-owner --no-same-permissions -C "$1" -f -'
        with self._in_use():
            conn = ExecConnection.open(self._api, self.container_id, ["sh", "-c", script, "write-files", dest])
            code, messages = files.write_files(conn, archive, timeout=max(60.0, len(archive) / 1e6))
        if code != 0:
            raise SandboxError(f"writing files to {dest} failed (exit {code}): {messages.strip()}")

    def copy_out(self, dest_dir: Path, *, src: str = "/testbed/output") -> CopyOutReport:
        # No shell in front: one process start fewer under gVisor (the selection starts tar itself,
        # and none when it chose no file).
        argv = files.copy_out_argv(
            src, max_files=self.config.copy_out_max_files, max_bytes=self.config.copy_out_max_bytes
        )
        with self._in_use():
            conn = ExecConnection.open(self._api, self.container_id, argv, stdin=False)
            return files.read_tar_stream(
                conn,
                dest_dir,
                max_bytes=self.config.copy_out_max_bytes,
                max_files=self.config.copy_out_max_files,
                timeout=max(120.0, self.config.copy_out_max_bytes / 5e6),
            )

    def save_snapshot(self, dest: IO[bytes], *, max_bytes: int) -> SnapshotReport | None:
        return snapshots.save_testbed(self._open_exec, dest, max_bytes=max_bytes)

    def restore_snapshot(self, source: ByteSource, *, size: int) -> None:
        snapshots.restore_testbed(self._open_exec, source, size=size)

    @contextmanager
    def _open_exec(self, argv: list[str], stdin: bool) -> Iterator[ExecConnection]:
        """An exec in the sandbox, kept awake meanwhile; closed at the end of the block."""
        with self._in_use():
            conn = ExecConnection.open(self._api, self.container_id, argv, stdin=stdin)
            try:
                yield conn
            finally:
                conn.close()

    def stop(self) -> None:
        """Remove the container. A second caller (say, release() while a
        cancel's stop is under way in another thread) waits for the first, so
        that a process exiting right after never leaves the container behind."""
        with self._freeze_lock:
            already_stopping, self._stopped = self._stopped, True
            self._thaw()  # a frozen gVisor sandbox cannot answer the runtime's kill
        if already_stopping:
            self._removed.wait(timeout=STOP_WAIT_SECONDS)
            return
        try:
            self._shell.close()
            self._api.remove_container(self.container_id, force=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                logger.warning("could not remove sandbox %s: %s", self.container_id[:12], exc)
        except ENGINE_UNANSWERED as exc:
            # The run ends all the same; the engine may still finish the removal, else this host's
            # janitor removes the sandbox once no active run claims it.
            logger.warning(
                "sandbox %s: the engine did not answer its removal (%s); the janitor removes it",
                self.container_id[:12], exc,
            )  # fmt: skip
        finally:
            self._removed.set()

    # -- state ---------------------------------------------------------------
    def is_running(self) -> bool:
        try:
            state = self._api.inspect_container(self.container_id)["State"]
        except docker.errors.NotFound:
            return False
        return bool(state.get("Running"))

    def exit_reason(self, *, settle_seconds: float = 0.0) -> str:
        """Why the container stopped. With `settle_seconds`, wait that long for
        the engine to record the end (the shell can notice a killed sandbox,
        e.g. out of memory, before Docker updates the container's state)."""
        deadline = time.monotonic() + settle_seconds
        while True:
            try:
                state = self._api.inspect_container(self.container_id)["State"]
            except docker.errors.NotFound:
                return "removed"
            if not state.get("Running") or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        if state.get("Running"):
            return "running"
        if state.get("OOMKilled") or state.get("ExitCode") == 137:
            return "killed: out of memory or a limit was exceeded"
        return f"exited with code {state.get('ExitCode')}"


def _unavailable(message: str, started: float) -> CommandResult:
    return CommandResult(
        exit_code=None, output=message, duration=time.monotonic() - started, shell_restarted=False, sandbox_died=True
    )
