#!/usr/bin/env bash
# The chart's alerting rules, tested as users install them (docs/monitoring.md):
#   1. helm template renders templates/prometheusrule.yaml (monitoring.prometheusRule.enabled,
#      release etcd-operator in etcd-operator-system) and its spec is cut out into rules.yaml;
#   2. promtool check rules rules.yaml;
#   3. every alert of rules.yaml has a test in test/monitoring/rules-test.yaml;
#   4. promtool test rules on that file;
#   5. every PromQL expression of the rendered Grafana dashboard parses (promtool check rules on
#      a rule file that records each one).
# promtool comes from $PROMTOOL, else hack/tools/build.sh prometheus (pinned, cached); helm
# from $HELM, else hack/tools/build.sh helm. Output under build/monitoring/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

HELM=${HELM:-$(hack/tools/build.sh helm)/helm}
PROMTOOL=${PROMTOOL:-$(hack/tools/build.sh prometheus)/promtool}
out=build/monitoring
mkdir -p "$out"

"$HELM" template etcd-operator charts/etcd-operator --namespace etcd-operator-system \
	--set monitoring.prometheusRule.enabled=true \
	--show-only templates/prometheusrule.yaml >"$out/prometheusrule.yaml"
# The rule file is the object's spec (groups:), one indentation level less.
awk 'on { print substr($0, 3) } /^spec:$/ { on = 1 }' "$out/prometheusrule.yaml" >"$out/rules.yaml"
grep -q '^groups:' "$out/rules.yaml" || { echo "rules-test: no spec.groups in the rendering" >&2; exit 1; }
cp test/monitoring/rules-test.yaml "$out/rules-test.yaml"

"$PROMTOOL" check rules "$out/rules.yaml"

missing=""
for a in $(sed -n 's/^ *- alert: *//p' "$out/rules.yaml"); do
	grep -q "alertname: $a\$" "$out/rules-test.yaml" || missing="$missing $a"
done
if [ -n "$missing" ]; then
	echo "rules-test: alerts without a test in test/monitoring/rules-test.yaml:$missing" >&2
	exit 1
fi

"$PROMTOOL" test rules "$out/rules-test.yaml"

# The dashboard's expressions, each as a recording rule, so promtool parses every one of them.
"$HELM" template etcd-operator charts/etcd-operator --namespace etcd-operator-system \
	--set monitoring.dashboard.enabled=true \
	--show-only templates/grafana-dashboard.yaml >"$out/dashboard.yaml"
{
	echo "groups:"
	echo "- name: dashboard"
	echo "  rules:"
	# A JSON string is a YAML double-quoted scalar as it stands.
	sed -n 's/^ *"expr": \(".*"\),\{0,1\}$/\1/p' "$out/dashboard.yaml" |
		awk '{ printf "  - record: dashboard:expr_%d\n    expr: %s\n", NR, $0 }'
} >"$out/dashboard-exprs.yaml"
n=$(grep -c 'record:' "$out/dashboard-exprs.yaml" || true)
[ "$n" -gt 0 ] || { echo "rules-test: no expression found in the dashboard" >&2; exit 1; }
"$PROMTOOL" check rules "$out/dashboard-exprs.yaml"
echo "rules-test: the dashboard's $n expressions parse"
