#!/usr/bin/env bash
# Renders the Apache Pulsar Helm chart with install.md's two sets of values and prints what the broker gets: its
# image, its init containers, its volume mounts and the plugin's keys in its ConfigMap (which the chart hands to
# bin/apply-config-from-env.py). Rendering only: nothing here runs on Kubernetes.
#   CHART_GIT: a clone of https://github.com/apache/pulsar-helm-chart; HELM: a helm 3 binary
#   (go install helm.sh/helm/v3/cmd/helm@v3.22.0).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${CHART_GIT:?a clone of apache/pulsar-helm-chart}" "${HELM:=helm}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for tag in pulsar-3.0.0 pulsar-4.7.0; do
  mkdir -p "$work/$tag"
  git -C "$CHART_GIT" archive "$tag" charts/pulsar | tar -x -C "$work/$tag"
  # The monitoring sub-charts are not fetched (no network to their repositories needed): drop the dependency list.
  python3 - "$work/$tag/charts/pulsar/Chart.yaml" <<'PY'
import re, sys
p = sys.argv[1]
s = open(p).read()
open(p, 'w').write(re.sub(r'\ndependencies:\n(?:[ -].*\n?)*', '\n', s))
PY
  for values in image init; do
    "$HELM" template rel "$work/$tag/charts/pulsar" --kube-version 1.30.0 -f "$here/values-$values.yaml" \
      > "$work/$tag-$values.yaml"
    python3 - "$work/$tag-$values.yaml" "$tag" "$values" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
def broker(kind):
    return [d for d in docs if d['kind'] == kind and d['metadata']['name'].endswith('-broker')][0]
spec = broker('StatefulSet')['spec']['template']['spec']
c = [c for c in spec['containers'] if c['name'].endswith('broker')][0]
keys = {k: v for k, v in broker('ConfigMap')['data'].items() if 'nterceptor' in k or 'broadcast' in k}
print(f"chart {sys.argv[2]}, values-{sys.argv[3]}.yaml")
print(f"  broker image: {c['image']}")
print(f"  init containers: {[(i['name'], i['image']) for i in spec.get('initContainers') or []]}")
print(f"  broker mounts: {[m['mountPath'] for m in c.get('volumeMounts') or []]}")
print(f"  ConfigMap keys: {keys}")
PY
  done
done
