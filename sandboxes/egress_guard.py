"""The egress policy checked before every sandbox starts (see sandboxes.network).

An `iptables -F` or a firewall reload must not silently open the sandboxes'
network: each start asks the guard, which reads the tables at most once per
POLICY_CHECK_TTL seconds and restores a drifted policy, or refuses the start.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import docker

from sandboxes.firewall import NetworkPolicyError, daemon_address, policy_runner
from sandboxes.network import EgressPolicy, NetworkSettings
from sandboxes.per_process import per_process_by

logger = logging.getLogger(__name__)
POLICY_CHECK_TTL = 5.0  # seconds a verified policy is trusted before the next sandbox start checks again


class EgressGuard:
    """Before each sandbox starts: is the policy still in place? One read of
    the tables (no re-apply), trusted for `ttl` seconds. A drifted policy is
    re-applied; if that fails, the start is refused: a sandbox never starts
    unpoliced."""

    def __init__(
        self, policy: EgressPolicy, *, ttl: float = POLICY_CHECK_TTL, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.policy = policy
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._verified_at: float | None = None
        self._ever_verified = False
        self.repairs = 0  # how many times a drifted policy was restored (seen by tests and logs)

    def ensure(self) -> None:
        with self._lock:  # concurrent starts wait for one check instead of each running their own
            if self._verified_at is not None and self._clock() - self._verified_at < self.ttl:
                return
            self._verified_at = None
            problems = self.policy.problems()
            if problems:
                bridge = self.policy.net.bridge
                # The first check of a process usually finds it missing (a new host, a new bridge);
                # a policy that was in place and is not any more is worth an operator's attention.
                level = logging.WARNING if self._ever_verified else logging.INFO
                logger.log(level, "egress policy for bridge %s is not in place (%s): applying it", bridge, problems)
                try:
                    self.policy.apply()
                except NetworkPolicyError as exc:
                    raise NetworkPolicyError(
                        f"the egress policy for bridge {bridge} is not in place ({'; '.join(problems)}) and could "
                        f"not be restored: {exc}. No sandbox starts until it is: run `python manage.py "
                        "sandbox_doctor --fix` as root on the Docker host."
                    ) from exc
                if remaining := self.policy.problems():
                    raise NetworkPolicyError(
                        f"the egress policy for bridge {bridge} was re-applied but is still not in place: "
                        f"{'; '.join(remaining)}. No sandbox starts until it is."
                    )
                self.repairs += 1
            self._verified_at = self._clock()
            self._ever_verified = True


def _network_on_daemon(client: docker.DockerClient, net: NetworkSettings, image: str) -> tuple[str, NetworkSettings]:
    return daemon_address(client), net


@per_process_by(_network_on_daemon)
def egress_guard(client: docker.DockerClient, net: NetworkSettings, image: str) -> EgressGuard:
    """The process-wide guard of one network on one daemon."""
    return EgressGuard(EgressPolicy(net, policy_runner(client, image)))
