#!/usr/bin/env bash
# Check the Helm chart as users meet it (make lint):
#   - `helm lint --strict`, with the defaults and with the optional parts on;
#   - values.schema.json: the defaults pass, and each deliberately wrong value below makes
#     `helm template` fail with a schema message naming that value;
#   - charts/etcd-operator/README.md's values table is current (hack/chart-readme.py).
#
# The helm binary comes from $HELM, else from hack/tools/build.sh helm (pinned, cached).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
chart=$root/charts/etcd-operator
if [ -z "${HELM:-}" ]; then
	HELM=$("$root/hack/tools/build.sh" helm)/helm
fi

"$HELM" lint --strict "$chart" >/dev/null
"$HELM" lint --strict "$chart" --set replicaCount=2 \
	--set monitoring.podMonitor.enabled=true,monitoring.prometheusRule.enabled=true \
	--set monitoring.dashboard.enabled=true,metrics.serviceMonitor.enabled=true \
	--set kubeRbacProxy.tls.certManager.enabled=true \
	--set kubeRbacProxy.tls.certManager.issuerRef.name=metrics-issuer >/dev/null

# Each case: a --set argument and the schema path helm must name in its error.
bad=(
	'image.pullPolicy=Sometimes|/image/pullPolicy'
	'replicaCount=two|/replicaCount'
	'imagePullPolicy=Always|additional properties'
	'manager.logLevel=verbose|/manager/logLevel'
	'manager.resources.limits.memory=lots|/manager/resources/limits/memory'
	'metrics.port=0|/metrics/port'
	'leaderElection.enabled=yes|/leaderElection/enabled'
	'monitoring.podMonitor.intervall=1m|/monitoring/podMonitor'
	'monitoring.prometheusRule.dbQuotaRatio=2|/monitoring/prometheusRule/dbQuotaRatio'
	'podSecurityContext.runAsNonRoot=false|/podSecurityContext/runAsNonRoot'
)
fail=0
for case in "${bad[@]}"; do
	set_arg=${case%%|*}
	want=${case#*|}
	if out=$("$HELM" template t "$chart" --set "$set_arg" 2>&1 >/dev/null); then
		echo "chart-lint: --set $set_arg rendered; values.schema.json should refuse it" >&2
		fail=1
	elif ! grep -q "values don't meet the specifications" <<<"$out" || ! grep -qF -- "$want" <<<"$out"; then
		echo "chart-lint: --set $set_arg failed without a schema message naming $want:" >&2
		echo "$out" >&2
		fail=1
	fi
done

# Values the schema must accept (open maps, alternatives).
"$HELM" template t "$chart" --set podAnnotations.example\\.com/a=b \
	--set podDisruptionBudget.minAvailable=50% --set podSecurityContext.runAsUser=1000 \
	--set manager.resources.limits.memory=256Mi --set-json 'tolerations=[{"operator":"Exists"}]' >/dev/null

"$root/hack/chart-readme.py" --check
exit $fail
