"""platform/k8s/: every manifest valid by Kubernetes' own schemas (offline, kubernetes-validate),
and together they deploy Atelier as it needs: workers only on gVisor nodes with the node's engine,
one beat, web behind an Ingress with the platform's two host names, the same settings as compose."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate
import pytest
import yaml

from sandboxes.agent.config import DEFAULTS as AGENT_DEFAULTS
from sandboxes.network import IPV4_BLOCKED, IPV6_BLOCKED
from tests.platform.compose_files import MAIN_FILE, ROOT
from tests.platform.compose_files import load as load_compose

K8S = ROOT / "platform" / "k8s"
MANIFESTS = sorted(p for p in K8S.rglob("*.yaml") if p.name != "kustomization.yaml")
# The oldest release still in wide use and the newest the validator knows.
KUBERNETES_VERSIONS = ("1.30.0", "1.37.0")
WORKLOADS = ("web", "beat", "worker", "migrate")


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


@pytest.fixture(scope="module")
def objects() -> dict[tuple[str, str], dict[str, Any]]:
    """(kind, name) -> object, of what `kubectl apply -k platform/k8s` applies."""
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    found = {}
    for resource in kustomization["resources"]:
        for doc in _documents(K8S / resource):
            found[(doc["kind"], doc["metadata"]["name"])] = doc
    return found


def _pod(objects: dict[tuple[str, str], dict[str, Any]], name: str) -> dict[str, Any]:
    kind = {"web": "Deployment", "beat": "Deployment", "worker": "DaemonSet", "migrate": "Job"}[name]
    spec: dict[str, Any] = objects[(kind, name)]["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: str(p.relative_to(K8S)))
def test_every_manifest_is_valid_by_the_kubernetes_schemas(path: Path, version: str) -> None:
    documents = _documents(path)
    assert documents
    for document in documents:
        # strict: a misspelt field is an error, not ignored; a kind without a schema raises too.
        kubernetes_validate.validate(document, version, strict=True)


def test_a_misspelt_field_is_refused_by_that_validation() -> None:
    (worker,) = _documents(K8S / "worker.yaml")
    worker["spec"]["template"]["spec"]["nodeSelectr"] = worker["spec"]["template"]["spec"].pop("nodeSelector")
    with pytest.raises(kubernetes_validate.ValidationError, match="nodeSelectr"):
        kubernetes_validate.validate(worker, KUBERNETES_VERSIONS[-1], strict=True)


def test_kustomize_applies_every_manifest_but_the_sketch_of_the_pod_backend() -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    top_level = sorted(p.name for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")
    assert sorted(kustomization["resources"]) == top_level
    assert (K8S / ".gitignore").read_text().split() == ["secrets.env"]  # the filled-in secrets are never committed
    (generator,) = kustomization["secretGenerator"]
    assert (generator["name"], generator["envs"]) == ("atelier-secrets", ["secrets.env"])


def test_workers_run_only_on_gvisor_nodes_with_the_nodes_engine_and_cgroups(
    objects: dict[tuple[str, str], dict[str, Any]],
) -> None:
    runtime_class = objects[("RuntimeClass", "gvisor")]
    assert runtime_class["handler"] == "runsc"
    pod = _pod(objects, "worker")
    assert pod["nodeSelector"] == runtime_class["scheduling"]["nodeSelector"]
    assert all(toleration in pod["tolerations"] for toleration in runtime_class["scheduling"]["tolerations"])
    assert pod["hostPID"] is True
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    (container,) = pod["containers"]
    mounts = {mount["mountPath"]: volumes[mount["name"]] for mount in container["volumeMounts"]}
    assert mounts["/var/run/docker.sock"]["hostPath"] == {"path": "/var/run/docker.sock", "type": "Socket"}
    assert mounts["/sys/fs/cgroup"]["hostPath"]["path"] == "/sys/fs/cgroup"
    assert container["securityContext"]["runAsUser"] == 0
    # Writable: the worker freezes idle sandboxes and prepares their low-weight parent group there.
    (cgroup_mount,) = [mount for mount in container["volumeMounts"] if mount["mountPath"] == "/sys/fs/cgroup"]
    assert not cgroup_mount.get("readOnly")
    assert mounts["/sys/fs/cgroup"]["hostPath"]["type"] == "Directory"
    assert "capabilities" not in container["securityContext"]
    assert container["command"][container["command"].index("celery") :][:4] == ["celery", "-A", "config", "worker"]
    identity = {entry["name"]: entry for entry in container["env"]}["SANDBOX_HOST_ID"]
    assert identity["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"  # stable across restarts
    assert objects[("ConfigMap", "atelier-config")]["data"]["SANDBOX_CGROUP_PARENT"] == "/atelier-sandboxes"
    assert objects[("ConfigMap", "atelier-config")]["data"]["SANDBOX_OFFLINE_CGROUP_PARENT"] == "/atelier_offline"
    assert pod["terminationGracePeriodSeconds"] >= AGENT_DEFAULTS["AGENT_MAX_WALL_SECONDS"]  # runs finish first


def test_only_the_worker_gets_the_nodes_socket_and_the_rest_run_restricted(
    objects: dict[tuple[str, str], dict[str, Any]],
) -> None:
    for name in ("web", "beat", "migrate"):
        pod = _pod(objects, name)
        assert "hostPID" not in pod, name
        assert all("hostPath" not in volume for volume in pod.get("volumes", [])), name
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert pod["automountServiceAccountToken"] is False, name
        (container,) = pod["containers"]
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        }, name


def test_web_beat_worker_and_migrations_run_one_image_with_one_configuration(
    objects: dict[tuple[str, str], dict[str, Any]],
) -> None:
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    (image,) = kustomization["images"]
    for name in WORKLOADS:
        (container,) = _pod(objects, name)["containers"]
        assert container["image"] == image["name"] == "atelier-platform", name
        assert container["envFrom"] == [
            {"configMapRef": {"name": "atelier-config"}},
            {"secretRef": {"name": "atelier-secrets"}},
        ], name


def test_one_beat_never_two_even_during_a_rollout(objects: dict[tuple[str, str], dict[str, Any]]) -> None:
    beat = objects[("Deployment", "beat")]["spec"]
    assert beat["replicas"] == 1
    assert beat["strategy"] == {"type": "Recreate"}


def test_the_ingress_serves_both_host_names_from_the_web_pods_over_tls(
    objects: dict[tuple[str, str], dict[str, Any]],
) -> None:
    config = objects[("ConfigMap", "atelier-config")]["data"]
    site, artifacts = urlsplit(config["SITE_URL"]), urlsplit(config["ARTIFACT_ORIGIN"])
    assert site.scheme == artifacts.scheme == "https"
    assert site.hostname != artifacts.hostname
    ingress = objects[("Ingress", "atelier")]["spec"]
    assert [rule["host"] for rule in ingress["rules"]] == [site.hostname, artifacts.hostname]
    assert sorted(host for entry in ingress["tls"] for host in entry["hosts"]) == sorted(
        [site.hostname, artifacts.hostname]
    )
    service = objects[("Service", "web")]["spec"]
    (web_port,) = service["ports"]
    for rule in ingress["rules"]:
        (path,) = rule["http"]["paths"]
        assert path["backend"]["service"] == {"name": "web", "port": {"name": web_port["name"]}}
    template = objects[("Deployment", "web")]["spec"]["template"]
    assert service["selector"] == template["metadata"]["labels"]
    (container,) = template["spec"]["containers"]
    assert web_port["targetPort"] in {port["name"] for port in container["ports"]}
    probe_host = container["readinessProbe"]["httpGet"]["httpHeaders"][0]["value"]
    assert set(config["ALLOWED_HOSTS"].split(",")) == {site.hostname, probe_host}
    # The client's address is read from X-Forwarded-For as far as the Ingress wrote it, never daphne's way.
    assert "--proxy-headers" not in container["command"]
    assert config["TRUSTED_PROXIES"]


def test_the_platform_gets_the_same_settings_as_from_compose_with_the_secrets_apart(
    objects: dict[tuple[str, str], dict[str, Any]],
) -> None:
    config = objects[("ConfigMap", "atelier-config")]["data"]
    example = [line for line in (K8S / "secrets.env.example").read_text().splitlines() if "=" in line]
    secrets = {line.split("=", 1)[0] for line in example}
    assert all(line.endswith("=") for line in example)  # names only, never a value
    compose = set(load_compose(MAIN_FILE)["services"]["web"]["environment"])
    assert set(config) | secrets == compose
    assert not set(config) & secrets
    assert not [key for key in config if any(word in key for word in ("SECRET", "PASSWORD", "KEY"))]


def test_sandbox_pods_of_the_sketch_run_under_gvisor_with_the_platforms_egress_policy() -> None:
    (pod,) = _documents(K8S / "sandbox-backend" / "sandbox-pod.yaml")
    (policy,) = _documents(K8S / "sandbox-backend" / "egress.yaml")
    assert pod["spec"]["runtimeClassName"] == "gvisor"
    assert pod["spec"]["automountServiceAccountToken"] is False
    assert policy["spec"]["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert policy["spec"]["ingress"] == []
    (rule,) = policy["spec"]["egress"]
    blocked = {ipaddress.ip_network(c) for block in rule["to"] for c in block["ipBlock"]["except"]}
    assert blocked == {ipaddress.ip_network(c) for c in (*IPV4_BLOCKED, *IPV6_BLOCKED)}
