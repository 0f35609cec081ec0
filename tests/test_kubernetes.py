"""The Kubernetes manifests (deploy/kubernetes: a kustomize base and two overlays), checked offline.

Every overlay is rendered by kustomize (``kubectl kustomize``, the tool the files are written for) and each
rendered object is validated: the core kinds against the Kubernetes API schemas that ``kubernetes-validate``
ships (strict: an unknown field is an error), KEDA's ``ScaledObject`` against KEDA's own CRD, vendored in
deploy/kubernetes/schemas (no registry package ships it), and against a stricter schema beside it written
from KEDA's documentation (an unknown field or a scaler setting it does not list is an error).  The
base files are validated as they stand too, so a machine without kubectl still checks every object.  Then
the rules the manifests must keep: probes (liveness never depends on Redis, readiness does), non-root and a
read-only root filesystem with a writable /tmp, requests and limits, PodDisruptionBudgets, KEDA triggers
on RQ's own queue keys, and the shutdown budget (preStop < gunicorn's graceful timeout <
terminationGracePeriodSeconds; a worker's grace period >= the longest AI job).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import redis
import yaml

from service import config, queues

ROOT = Path(__file__).resolve().parent.parent
K8S = ROOT / "deploy" / "kubernetes"
OVERLAYS = sorted(p.name for p in (K8S / "overlays").iterdir() if (p / "kustomization.yaml").exists())
KEDA_SCHEMA = json.loads((K8S / "schemas" / "keda-scaledobject.schema.json").read_text())
#: KEDA's CustomResourceDefinition of ScaledObject as KEDA ships it, and the schema the API server applies
KEDA_CRD = yaml.safe_load((K8S / "schemas" / "keda.sh_scaledobjects.yaml").read_text())
(KEDA_CRD_SCHEMA,) = [version["schema"]["openAPIV3Schema"] for version in KEDA_CRD["spec"]["versions"]
                      if version["name"] == "v1alpha1"]
#: the Kubernetes version the manifests are validated for (the oldest whose API they use: autoscaling/v2,
#: policy/v1 -- both GA since 1.23; kubernetes-validate ships schemas for many versions)
KUBERNETES_VERSION = "1.29.0"


def kustomize(path: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl on the PATH to render the kustomizations (the base files are validated "
                    "without it by test_every_base_object_is_valid_as_written)")
    out = subprocess.run([kubectl, "kustomize", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return [doc for doc in yaml.safe_load_all(out.stdout) if doc]


def base_objects() -> list[dict[str, Any]]:
    listed = yaml.safe_load((K8S / "base" / "kustomization.yaml").read_text())["resources"]
    return [doc for name in listed for doc in yaml.safe_load_all((K8S / "base" / name).read_text()) if doc]


def validate(obj: dict[str, Any]) -> None:
    if obj["kind"] == "ScaledObject":
        assert obj["apiVersion"] == f"{KEDA_CRD['spec']['group']}/v1alpha1"
        jsonschema.validate(obj, KEDA_CRD_SCHEMA)
        jsonschema.validate(obj, KEDA_SCHEMA)
    else:
        kubernetes_validate.validate(obj, KUBERNETES_VERSION, strict=True)


def by_kind(objs: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objs if o["kind"] == kind}


def settings_literals(objs: list[dict[str, Any]]) -> dict[str, str]:
    (settings,) = [o for o in objs if o["kind"] == "ConfigMap" and o["metadata"]["name"].startswith(
        "tilehouse-settings")]
    return dict(settings["data"])


@pytest.fixture(scope="module", params=OVERLAYS)
def rendered(request) -> list[dict[str, Any]]:
    return kustomize(K8S / "overlays" / request.param)


def test_every_base_object_is_valid_as_written():
    objs = base_objects()
    assert {o["kind"] for o in objs} >= {"Deployment", "Service", "HorizontalPodAutoscaler",
                                         "PodDisruptionBudget", "ScaledObject"}
    for obj in objs:
        validate(obj)


def test_every_rendered_object_is_valid_for_kubernetes_and_keda(rendered):
    kinds = {o["kind"] for o in rendered}
    assert kinds == {"ConfigMap", "Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget",
                     "ScaledObject"}
    for obj in rendered:
        validate(obj)
        assert obj["metadata"].get("namespace") == "tilehouse", obj["metadata"]["name"]


def test_the_vendored_keda_crd_defines_scaled_objects_and_refuses_broken_ones():
    assert KEDA_CRD["kind"] == "CustomResourceDefinition"
    assert KEDA_CRD["metadata"]["name"] == "scaledobjects.keda.sh"
    assert KEDA_CRD["spec"]["names"]["kind"] == "ScaledObject"
    # the CRD's schema refuses a ScaledObject without triggers or with a trigger that is not an object
    (scaled, *_) = by_kind(base_objects(), "ScaledObject").values()
    for broken in ({**scaled, "spec": {k: v for k, v in scaled["spec"].items() if k != "triggers"}},
                   {**scaled, "spec": {**scaled["spec"], "triggers": ["redis"]}},
                   {**scaled, "spec": {**scaled["spec"], "minReplicaCount": "one"}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, KEDA_CRD_SCHEMA)


def test_the_keda_schema_refuses_what_keda_would_not_take():
    (scaled, *_) = by_kind(base_objects(), "ScaledObject").values()
    for broken in ({**scaled, "spec": {**scaled["spec"], "maxReplicas": 3}},               # misspelt field
                   {**scaled, "spec": {k: v for k, v in scaled["spec"].items() if k != "triggers"}},
                   {**scaled, "spec": {**scaled["spec"], "triggers": [{"type": "redis",
                                                                       "metadata": {"listName": "x"}}]}}):
        with pytest.raises(jsonschema.ValidationError):
            validate(broken)


def test_api_probes_liveness_without_redis_and_readiness_with_it(rendered):
    (api,) = [c for c in by_kind(rendered, "Deployment")["tilehouse-api"]["spec"]["template"]["spec"]["containers"]]
    # /healthz answers as long as the process serves HTTP, /readyz checks Redis and the queues
    # (service.observability; tests/test_observability.py holds them to that)
    assert api["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert api["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert api["startupProbe"]["httpGet"]["path"] == "/healthz"
    service = by_kind(rendered, "Service")["tilehouse-api"]
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"], "/metrics stays off the Service"


def test_every_pod_runs_as_non_root_on_a_read_only_root_with_requests_and_limits(rendered):
    cfg = settings_literals(rendered)
    for name, deployment in by_kind(rendered, "Deployment").items():
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0, name
        mounted = {v["name"]: v for v in pod["volumes"]}
        for c in pod["containers"]:
            sc = c["securityContext"]
            assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False, name
            assert sc["capabilities"]["drop"] == ["ALL"], name
            tmp = [m for m in c["volumeMounts"] if m["mountPath"] == "/tmp"]
            assert tmp and "emptyDir" in mounted[tmp[0]["name"]], f"{name}: /tmp must be a writable emptyDir"
            assert cfg["PROMETHEUS_MULTIPROC_DIR"].startswith("/tmp/")
            for kind in ("cpu", "memory"):
                assert kind in c["resources"]["requests"] and kind in c["resources"]["limits"], (name, kind)


def test_every_deployment_has_a_disruption_budget_and_the_workers_scale_on_rq_queue_keys(rendered):
    deployments = by_kind(rendered, "Deployment")
    budgets = by_kind(rendered, "PodDisruptionBudget")
    labels = {name: d["spec"]["selector"]["matchLabels"] for name, d in deployments.items()}
    assert sorted(b["spec"]["selector"]["matchLabels"].items() for b in budgets.values()) == \
        sorted(v.items() for v in labels.values())
    assert budgets["tilehouse-worker-play"]["spec"]["minAvailable"] >= 1
    hpa = by_kind(rendered, "HorizontalPodAutoscaler")["tilehouse-api"]
    assert hpa["spec"]["scaleTargetRef"]["name"] == "tilehouse-api" and hpa["spec"]["minReplicas"] >= 2
    scaled = by_kind(rendered, "ScaledObject")
    # a client that never connects: a Queue only needs one to exist to tell its key
    queue_keys = {q.name: q.key for q in queues.make_queues(redis.Redis(port=1)).values()}
    lists = {name: {t["metadata"]["listName"] for t in s["spec"]["triggers"]} for name, s in scaled.items()}
    # RQ keeps queue <name> as the Redis list rq:queue:<name>
    assert lists == {"tilehouse-worker": {queue_keys["suggest"], queue_keys["play"]},
                     "tilehouse-worker-play": {queue_keys["play"], queue_keys["suggest"]}}
    assert scaled["tilehouse-worker-play"]["spec"]["minReplicaCount"] >= 1
    for name, s in scaled.items():
        assert s["spec"]["scaleTargetRef"]["name"] in deployments, name
        command = deployments[name]["spec"]["template"]["spec"]["containers"][0]["command"]
        served = command[command.index("--queues") + 1].split(",") if "--queues" in command else queues.QUEUE_ORDER
        assert {queue_keys[q] for q in served} == lists[name], name


def gunicorn_graceful_timeout(env: dict[str, str]) -> int:
    """gunicorn.conf.py's graceful_timeout under ``env`` (the pod's settings), read by running the file."""
    code = "import runpy, sys; print(runpy.run_path(sys.argv[1])['graceful_timeout'])"
    out = subprocess.run([sys.executable, "-c", code, str(ROOT / "gunicorn.conf.py")], capture_output=True,
                         text=True, env={"PATH": "/usr/bin:/bin", **env}, cwd=ROOT, timeout=30)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.strip())


def test_shutdown_budget_holds_prestop_below_graceful_timeout_below_the_grace_period(rendered):
    cfg = settings_literals(rendered)
    deployments = by_kind(rendered, "Deployment")
    api_pod = deployments["tilehouse-api"]["spec"]["template"]["spec"]
    (api,) = api_pod["containers"]
    env = {**cfg, **{e["name"]: e["value"] for e in api.get("env", [])}}
    pre_stop = api["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    pre_stop_seconds = float(pre_stop[1])
    graceful = gunicorn_graceful_timeout(env)
    grace = api_pod["terminationGracePeriodSeconds"]
    # the kubelet counts the grace period from the start of preStop: both must fit in it
    assert pre_stop_seconds < graceful < grace and pre_stop_seconds + graceful < grace
    job_timeout = config.load(environ=cfg)["AI_JOB_TIMEOUT_SECONDS"]
    for name in ("tilehouse-worker", "tilehouse-worker-play"):
        pod = deployments[name]["spec"]["template"]["spec"]
        assert pod["terminationGracePeriodSeconds"] >= job_timeout, name
        assert "lifecycle" not in pod["containers"][0], f"{name}: a preStop would eat into the job's time"
