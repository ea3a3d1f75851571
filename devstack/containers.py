"""The sandbox containers a run left on a Docker engine: what a test or benchmark checks is gone
once the run ended or was cancelled."""

from __future__ import annotations

import docker


def run_containers(run_id: int, *, client: docker.DockerClient | None = None) -> list[str]:
    """Names of containers still there for this run (named or labelled after it), on
    the machine's engine or on `client`'s."""
    own_client = client is None
    client = client or docker.from_env()
    names = []
    # Summaries only: a container may vanish between listing and inspecting.
    for summary in client.api.containers(all=True, filters={"label": "atelier.sandbox"}):
        name = (summary.get("Names") or ["/?"])[0].lstrip("/")
        labels = summary.get("Labels") or {}
        if name.startswith(f"atelier-run-{run_id}-") or labels.get("atelier.run_id") == str(run_id):
            names.append(name)
    if own_client:
        client.close()
    return names
