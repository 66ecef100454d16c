#!/usr/bin/env python3
# manifests-check.py -- the deployment files are well formed (issue 36):
# the CDI spec under deploy/cdi and the Kubernetes manifests under
# deploy/kubernetes, checked for the fields their schemas require and for
# what must agree within them (a DaemonSet's selector and its pods'
# labels, every volumeMount's volume, the CDI kind the library names).
# No cluster and no network: what a kubectl --dry-run=client or
# kubeconform would refuse first. Exits 77 (skipped) without PyYAML.
import os
import re
import sys

try:
    import yaml
except ImportError:
    print("manifests-check: skipped: no PyYAML (python3-yaml)")
    sys.exit(77)

top = os.environ.get("TOP_SRCDIR") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..")
errors = []


def err(where, what):
    errors.append(f"{where}: {what}")


def need(doc, path, where, kind=None):
    """The value at the dotted path, which must be there (and of kind)."""
    cur = doc
    for key in path.split("."):
        if not isinstance(cur, dict) or key not in cur:
            err(where, f"no {path}")
            return None
        cur = cur[key]
    if kind is not None and not isinstance(cur, kind):
        err(where, f"{path} is {type(cur).__name__}, not {kind.__name__}")
        return None
    return cur


DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
HOSTPATH_TYPES = {"", "DirectoryOrCreate", "Directory", "FileOrCreate",
                  "File", "Socket", "CharDevice", "BlockDevice"}
API = {"DaemonSet": "apps/v1", "Pod": "v1", "ConfigMap": "v1"}


def check_pod_spec(spec, where):
    containers = need(spec, "containers", where, list)
    volumes = {v.get("name") for v in spec.get("volumes", [])}
    for v in spec.get("volumes", []):
        if not DNS_LABEL.match(str(v.get("name", ""))):
            err(where, f"volume name {v.get('name')!r}")
        if "hostPath" in v:
            hp = v["hostPath"]
            if not str(hp.get("path", "")).startswith("/"):
                err(where, f"hostPath of {v['name']} is not absolute")
            if hp.get("type", "") not in HOSTPATH_TYPES:
                err(where, f"hostPath type {hp.get('type')!r}")
    for c in containers or []:
        cw = f"{where}: container {c.get('name')}"
        if not DNS_LABEL.match(str(c.get("name", ""))):
            err(cw, "no valid name")
        if not c.get("image"):
            err(cw, "no image")
        for m in c.get("volumeMounts", []):
            if m.get("name") not in volumes:
                err(cw, f"mounts volume {m.get('name')!r}, which is not there")
            if not str(m.get("mountPath", "")).startswith("/"):
                err(cw, f"mountPath {m.get('mountPath')!r}")
        for key in ("command", "args"):
            if key in c and not all(isinstance(a, str) for a in c[key]):
                err(cw, f"{key} holds a non-string")


def check_k8s(doc, where):
    kind = need(doc, "kind", where, str)
    if kind not in API:
        err(where, f"kind {kind} is not one this check knows")
        return
    if doc.get("apiVersion") != API[kind]:
        err(where, f"apiVersion {doc.get('apiVersion')} for {kind}")
    name = need(doc, "metadata.name", where, str)
    if name is not None and not DNS_SUBDOMAIN.match(name):
        err(where, f"metadata.name {name!r}")
    for k, v in (doc["metadata"].get("annotations") or {}).items():
        if not isinstance(v, str):
            err(where, f"annotation {k} is not a string")
    where = f"{where} ({kind} {name})"
    if kind == "DaemonSet":
        sel = need(doc, "spec.selector.matchLabels", where, dict)
        labels = need(doc, "spec.template.metadata.labels", where, dict)
        if sel is not None and labels is not None and \
                any(labels.get(k) != v for k, v in sel.items()):
            err(where, "the selector does not select its own pods")
        spec = need(doc, "spec.template.spec", where, dict)
        if spec is not None:
            check_pod_spec(spec, where)
    elif kind == "Pod":
        spec = need(doc, "spec", where, dict)
        if spec is not None:
            check_pod_spec(spec, where)
    elif kind == "ConfigMap":
        for k, v in (doc.get("data") or {}).items():
            if not isinstance(v, str):
                err(where, f"data {k} is not a string")


def check_cdi(doc, where):
    version = need(doc, "cdiVersion", where, str)
    # podman 4.3 (Debian 12) reads specs up to 0.5.0
    if version is not None and version not in ("0.3.0", "0.4.0", "0.5.0"):
        err(where, f"cdiVersion {version}")
    kind = need(doc, "kind", where, str)
    if kind is not None and not re.match(
            r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[a-zA-Z0-9]([-_.a-zA-Z0-9]*[a-zA-Z0-9])?$",
            kind):
        err(where, f"kind {kind!r} is not vendor/class")
    devices = need(doc, "devices", where, list) or []
    if not devices:
        err(where, "no devices")
    for d in devices:
        dname = d.get("name", "")
        if not re.match(r"^[a-zA-Z0-9]([-_.:a-zA-Z0-9]*[a-zA-Z0-9])?$", dname):
            err(where, f"device name {dname!r}")
        edits = d.get("containerEdits") or {}
        if not any(edits.get(k) for k in ("env", "deviceNodes", "hooks",
                                           "mounts")):
            err(where, f"device {dname} edits nothing")
        for m in edits.get("mounts", []):
            for key in ("hostPath", "containerPath"):
                if not str(m.get(key, "")).startswith("/"):
                    err(where, f"device {dname}: mount {key} {m.get(key)!r}")
        for e in edits.get("env", []):
            if "=" not in e:
                err(where, f"device {dname}: env {e!r}")
    return [f"{kind}={d.get('name')}" for d in devices]


checked = 0
names = []
cdi_dir = os.path.join(top, "deploy", "cdi")
for f in sorted(os.listdir(cdi_dir)):
    path = os.path.join(cdi_dir, f)
    with open(path) as fh:
        names += check_cdi(yaml.safe_load(fh), path)
    checked += 1
k8s_dir = os.path.join(top, "deploy", "kubernetes")
for f in sorted(os.listdir(k8s_dir)):
    path = os.path.join(k8s_dir, f)
    with open(path) as fh:
        for i, doc in enumerate(yaml.safe_load_all(fh)):
            if doc is not None:
                check_k8s(doc, f"{path}[{i}]")
                checked += 1

# what the library's refusal and the documents tell users to ask for
for path in ("librpmaclient/daemon_cred.c", "docs/containers.md"):
    with open(os.path.join(top, path)) as fh:
        text = fh.read()
    for used in set(re.findall(r"rpmad\.io/broker=\w+", text)):
        if used not in names:
            err(path, f"names CDI device {used}, which the spec has not")

for e in errors:
    print("manifests-check: " + e)
print(f"manifests-check: {checked} documents, {len(errors)} problems")
sys.exit(1 if errors else 0)
