"""Issue 21 (items 6 and 8): the shipped deployment is closed by default. Redis has a password from a
secret, only the bot reaches it, published ports stay on 127.0.0.1, every container runs unprivileged
on a read-only root, images are pinned by digest, the build context carries no secrets, and the image
installs hash-checked packages of the versions CI tests."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deploy.yaml_subset import load_all

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BOT_APPS = ("copilot-web", "copilot-worker")
REAL_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")


def k8s() -> list[dict[str, Any]]:
    return [doc for path in sorted((DEPLOY / "k8s").glob("*.yaml")) for doc in load_all(path.read_text(encoding="utf-8"))]


def workloads() -> list[dict[str, Any]]:
    return [doc for doc in k8s() if doc.get("kind") in ("Deployment", "StatefulSet")]


def compose() -> dict[str, Any]:
    return load_all((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))[0]


def name(doc: dict[str, Any]) -> str:
    return doc["metadata"]["name"]


# --- Redis: a password from a secret, and the bot uses it -----------------------------------------

def test_compose_redis_requires_a_password_taken_from_the_environment_never_written_here() -> None:
    services = compose()["services"]
    redis = services["redis"]
    assert "requirepass" in " ".join(redis["command"]) and "$$REDIS_PASSWORD" in " ".join(redis["command"])
    assert redis["environment"]["REDIS_PASSWORD"].startswith("${REDIS_PASSWORD:?")  # compose refuses to start unset
    assert redis["environment"]["REDISCLI_AUTH"].startswith("${REDIS_PASSWORD:?")  # the health check authenticates
    assert "ports" not in redis  # nothing outside the compose network reaches Redis
    for service in ("web", "worker"):
        assert re.fullmatch(r"redis://:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379/0", services[service]["environment"]["REDIS_URL"])


def test_k8s_redis_requires_the_secret_password_and_the_bot_uses_it() -> None:
    by_name = {name(w): w for w in workloads()}
    redis = by_name["copilot-redis"]["spec"]["template"]["spec"]["containers"][0]
    assert "requirepass" in " ".join(redis["command"]) and "$REDIS_PASSWORD" in " ".join(redis["command"])
    env = {e["name"]: e for e in redis["env"]}
    assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "copilot-secrets", "key": "REDIS_PASSWORD"}
    for app in BOT_APPS:
        container = by_name[app]["spec"]["template"]["spec"]["containers"][0]
        names = [e["name"] for e in container["env"]]
        env = {e["name"]: e for e in container["env"]}
        # $(VAR) expands only variables defined earlier in the list
        assert names.index("REDIS_PASSWORD") < names.index("REDIS_URL")
        assert env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]["key"] == "REDIS_PASSWORD"
        assert env["REDIS_URL"]["value"] == "redis://:$(REDIS_PASSWORD)@copilot-redis:6379/0"


def test_the_secret_template_carries_no_values() -> None:
    (secret,) = [doc for doc in k8s() if doc.get("kind") == "Secret"]
    assert {"REDIS_PASSWORD", "METRICS_TOKEN"} <= set(secret["stringData"])
    assert all(value == "" for value in secret["stringData"].values())


def test_no_password_is_written_into_a_manifest() -> None:
    texts = [p.read_text(encoding="utf-8") for p in [*(DEPLOY / "k8s").glob("*.yaml"), DEPLOY / "docker-compose.yml"]]
    for text in texts:
        assert not re.search(r"requirepass\s+[A-Za-z0-9]", text)
        assert not re.search(r"redis://[^:@/\s]*:(?!\$)[^@/\s]+@", text)  # a literal password in a URL


# --- network: only the bot reaches Redis, only the web port reaches the web, ports on loopback ---------

def test_network_policies_let_only_the_bot_reach_redis_and_only_the_web_port_reach_the_bot() -> None:
    policies = {name(d): d["spec"] for d in k8s() if d.get("kind") == "NetworkPolicy"}
    redis = policies["copilot-redis"]
    assert redis["podSelector"] == {"matchLabels": {"app": "copilot-redis"}} and redis["policyTypes"] == ["Ingress"]
    (rule,) = redis["ingress"]
    (peer,) = rule["from"]
    assert set(peer) == {"podSelector"}  # no namespaceSelector or ipBlock beside it
    (expr,) = peer["podSelector"]["matchExpressions"]
    assert (expr["key"], expr["operator"], sorted(expr["values"])) == ("app", "In", sorted(BOT_APPS))
    assert rule["ports"] == [{"protocol": "TCP", "port": 6379}]
    web = policies["copilot-web"]
    assert web["podSelector"] == {"matchLabels": {"app": "copilot-web"}} and web["policyTypes"] == ["Ingress"]
    assert [r["ports"] for r in web["ingress"]] == [[{"protocol": "TCP", "port": 8080}]]
    worker = policies["copilot-worker"]
    assert worker["podSelector"] == {"matchLabels": {"app": "copilot-worker"}} and worker["ingress"] == []
    labels = {name(w): w["spec"]["template"]["metadata"]["labels"]["app"] for w in workloads()}
    assert labels == {"copilot-redis": "copilot-redis", "copilot-web": "copilot-web", "copilot-worker": "copilot-worker"}


def test_compose_publishes_ports_on_loopback_unless_told_otherwise() -> None:
    for service, spec in compose()["services"].items():
        for port in spec.get("ports", []):
            host = str(port).rsplit(":", 2)[0]
            assert host in ("127.0.0.1", "${WEB_BIND:-127.0.0.1}"), (service, port)


# --- containers: unprivileged, read-only, bounded ---------------------------------------------------

@pytest.mark.parametrize("workload", workloads(), ids=name)
def test_every_k8s_container_is_unprivileged_read_only_and_bounded(workload: dict[str, Any]) -> None:
    pod = workload["spec"]["template"]["spec"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] > 0
    volumes = {v["name"] for v in pod.get("volumes", [])} | {
        t["metadata"]["name"] for t in workload["spec"].get("volumeClaimTemplates", [])}
    for container in [*pod.get("initContainers", []), *pod["containers"]]:
        context = container["securityContext"]
        assert context["allowPrivilegeEscalation"] is False
        assert context["readOnlyRootFilesystem"] is True
        assert context["capabilities"]["drop"] == ["ALL"] and "add" not in context["capabilities"]
        for bound in ("requests", "limits"):
            assert {"cpu", "memory"} <= set(container["resources"][bound]), (container["name"], bound)
        mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
        assert "/tmp" in mounts and set(mounts.values()) <= volumes  # writes go to volumes, not the image


def test_compose_bot_containers_are_read_only_without_capabilities() -> None:
    services = compose()["services"]
    for service in ("web", "worker"):
        spec = services[service]
        assert spec["read_only"] is True and spec["cap_drop"] == ["ALL"]
        assert "no-new-privileges:true" in spec["security_opt"] and "/tmp" in spec["tmpfs"]


def test_the_readiness_probe_sends_the_metrics_token() -> None:
    """/readyz is closed beyond loopback (bot.metrics.StatusGate): the probe must carry METRICS_TOKEN."""
    (web,) = [w for w in workloads() if name(w) == "copilot-web"]
    container = web["spec"]["template"]["spec"]["containers"][0]
    probe = " ".join(container["readinessProbe"]["exec"]["command"])
    assert "/readyz" in probe and "METRICS_TOKEN" in probe and "Bearer" in probe
    assert container["envFrom"] == [{"secretRef": {"name": "copilot-secrets"}}]


# --- images pinned by digest --------------------------------------------------------------------------

def test_k8s_images_are_pinned_by_digest_in_the_kustomization() -> None:
    (kustomization,) = [d for d in k8s() if d.get("kind") == "Kustomization"]
    pins = {image["name"]: image for image in kustomization["images"]}
    resources = set(kustomization["resources"])
    assert resources == {p.name for p in (DEPLOY / "k8s").glob("*.yaml")} - {"kustomization.yaml", "secret.example.yaml"}
    for workload in workloads():
        for container in workload["spec"]["template"]["spec"]["containers"]:
            base = container["image"].split("@")[0].rsplit(":", 1)[0] if "@" not in container["image"] else None
            assert base in pins, container["image"]
            digest = pins[base]["digest"]
            # a real digest, or a placeholder the kubelet refuses (never a made-up sha256)
            assert REAL_DIGEST.fullmatch(digest) or digest.startswith("SET-"), digest


def test_dockerfile_and_compose_pin_base_images_by_digest() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    froms = re.findall(r"^FROM\s+(\S+)", dockerfile, flags=re.M)
    assert froms and all("@${PYTHON_IMAGE_DIGEST}" in f or REAL_DIGEST.search(f) for f in froms), froms
    default = re.search(r"^ARG PYTHON_IMAGE_DIGEST(?:=(\S*))?", dockerfile, flags=re.M)
    assert default is not None and not REAL_DIGEST.fullmatch(default.group(1) or ""), "a digest nobody verified"
    services = compose()["services"]
    assert services["redis"]["image"].startswith("redis:7-alpine@${REDIS_IMAGE_DIGEST:?")
    for service in ("web", "worker"):
        assert services[service]["build"]["args"]["PYTHON_IMAGE_DIGEST"].startswith("${PYTHON_IMAGE_DIGEST:?")


# --- build context and hashed installs ------------------------------------------------------------------

def test_dockerignore_keeps_secrets_history_and_local_state_out_of_the_build() -> None:
    entries = {line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    required = {".env", ".env.*", ".git", ".venv", ".copilot-data", "data", "index", "repos", "tests", ".pytest_cache",
                "**/__pycache__"}
    assert required <= entries, required - entries
    copied = re.findall(r"^COPY\s+(\S+)", (DEPLOY / "Dockerfile").read_text(encoding="utf-8"), flags=re.M)
    assert not set(copied) & entries  # what the image needs is not ignored


def _pins(path: Path) -> dict[str, str]:
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)", line)
        if match:
            pins[canonicalize_name(match.group(1))] = match.group(2)
    return pins


def test_the_hashed_lock_pins_the_versions_ci_tests_with_hashes() -> None:
    tested, hashed = _pins(ROOT / "requirements.lock"), _pins(ROOT / "requirements.hashes.lock")
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    build = {canonicalize_name(Requirement(r).name): Requirement(r) for r in pyproject["build-system"]["requires"]}
    runtime = {canonicalize_name(Requirement(r).name) for r in pyproject["project"]["dependencies"]}
    assert runtime <= set(hashed), runtime - set(hashed)
    for package, version in hashed.items():
        if package in tested:
            assert version == tested[package], (package, version, tested[package])
        else:  # only build tools, which pip-compile leaves out of requirements.lock
            assert package in build and build[package].specifier.contains(version), package
    # every pin carries at least one hash
    text = (ROOT / "requirements.hashes.lock").read_text(encoding="utf-8")
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        if re.match(r"^[A-Za-z0-9_.-]+==", block):
            assert "--hash=sha256:" in block, block.splitlines()[0]


def test_the_dockerfile_installs_with_require_hashes_only() -> None:
    dockerfile = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    installs = re.findall(r"pip install[^&\n]*", dockerfile)
    assert installs
    for command in installs:
        # third-party packages only from the hashed lock; the project itself from the context, no index
        assert "--require-hashes" in command or ("--no-index" in command and "--no-deps" in command), command
        assert "-c requirements.lock" not in command
    assert "requirements.hashes.lock" in dockerfile and "pip check" in dockerfile
