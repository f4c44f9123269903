"""Unpack one Kubernetes version's JSON schemas from the kubernetes-validate wheel (PyPI) for kubeconform.

    python deploy/helm/unpack_k8s_schemas.py WHEEL VERSION DEST   # e.g. v1.34.0 .tools/kubernetes-json-schema

The wheel keeps each version's strict schemas in kubernetes-json-schema/<version>-local-strict/<kind>-<group>-<api
version>.json, the layout kubeconform's -schema-location template names. Two things are rewritten so kubeconform
resolves them offline: each file's "$id" (a kubernetes.io URL, which would make its references remote) is dropped,
and references to "/api/_definitions.json" point at the _definitions.json beside the file.
"""

from __future__ import annotations

import json
import sys
import zipfile
from pathlib import Path

PREFIX = "kubernetes_validate/kubernetes-json-schema/"


def unpack(wheel: Path, version: str, dest: Path) -> int:
    folder = f"{version}-local-strict"
    out = dest / folder
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not (name.startswith(f"{PREFIX}{folder}/") and name.endswith(".json")):
                continue
            text = archive.read(name).decode("utf-8").replace('"/api/_definitions.json#', '"_definitions.json#')
            schema = json.loads(text)
            schema.pop("$id", None)
            (out / Path(name).name).write_text(json.dumps(schema), encoding="utf-8")
            count += 1
    if not count:
        raise SystemExit(f"no schemas for {version} in {wheel}")
    return count


if __name__ == "__main__":
    wheel, version, dest = sys.argv[1:4]
    print(f"{unpack(Path(wheel), version, Path(dest))} schemas of Kubernetes {version} in {dest}/{version}-local-strict")
