#!/usr/bin/env bash
# Build one pinned third-party tool from its Go module under hack/tools/<tool>/
# and cache the binaries outside the repository, keyed by tool, version and the
# hash of the module's go.mod/go.sum. A second call is instant.
#
#   hack/tools/build.sh <tool>      prints the directory holding the binaries
#
# Tools: kubernetes etcd-3.6.11 etcd-3.6.16 etcd-3.5.35 etcd-3.7.3 coredns helm minio chainsaw registry
#        kube-router cert-manager kube-rbac-proxy prometheus (promtool only)
#        prometheus-server (the Prometheus server, from the same pinned module as
#        promtool; a tool of its own so that rules-test never waits for it)
#        prometheus-operator (its operator binary and its CRDs, for the monitoring bed)
#        lincheck (the e2e linearizability checker: the repository's own module
#        test/lincheck, keyed by its sources too)
set -euo pipefail
# Braces: bash reads the whole body before running it, so editing this file
# while a long build runs cannot change what the running build does.
{

here=$(cd "$(dirname "$0")" && pwd)
tool=${1:?usage: build.sh <tool>}
dir=$here/$tool
srckey=""
# The server comes from promtool's pinned module (one go.mod, one version).
[ "$tool" = prometheus-server ] && dir=$here/prometheus
if [ "$tool" = lincheck ]; then
	dir=$(cd "$here/../.." && pwd)/test/lincheck
	srckey=$(find "$dir" -name '*.go' ! -name '*_test.go' | LC_ALL=C sort | xargs cat | sha256sum)
fi
[ -f "$dir/go.mod" ] || { echo "build.sh: unknown tool '$tool' (no $dir/go.mod)" >&2; exit 2; }

cache_root=${TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/etcd-operator/tools}
# The key covers what defines the output: the pinned modules and the recipe
# revision below (bump it when a recipe in this file changes its output).
recipe=1
key=$( (cat "$dir/go.mod" "$dir/go.sum"; echo "recipe=$recipe"; [ -z "$srckey" ] || echo "src=$srckey") | sha256sum | cut -c1-12)
version=$(sed -n 's,^// version: ,,p' "$dir/go.mod" | head -n1)
out=$cache_root/$tool-$version-$key
if [ -f "$out/.complete" ]; then
	echo "$out/bin"
	exit 0
fi

# One build per tool at a time: a second caller waits and then reuses it.
mkdir -p "$cache_root"
exec 9>"$cache_root/.$tool.lock"
flock 9
if [ -f "$out/.complete" ]; then
	echo "$out/bin"
	exit 0
fi
command -v go >/dev/null || export PATH=$PATH:/usr/local/go/bin

export GOWORK=off GOFLAGS=-mod=mod GOTOOLCHAIN=local CGO_ENABLED=0
# proxy.golang.org here does not answer sumdb lookups; go.sum is committed
# and still verified for every module it lists.
export GOSUMDB=off
export GOCACHE=${GOCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/go-build}

tmp=$out.tmp.$$
rm -rf "$tmp"
mkdir -p "$tmp/bin"
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
echo "build.sh: building $tool $version into $out (this can take a while)" >&2

build() { (cd "$dir" && go build -trimpath "$@"); }

case $tool in
kubernetes)
	minor=$(echo "$version" | cut -d. -f2)
	now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
	ld="-s -w"
	for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
		ld="$ld -X $p.gitVersion=$version -X $p.gitMajor=1 -X $p.gitMinor=$minor"
		ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=$now"
	done
	build -ldflags "$ld" -o "$tmp/bin/" \
		k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
		k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubelet \
		k8s.io/kubernetes/cmd/kube-proxy k8s.io/kubernetes/cmd/kubectl
	;;
etcd-*)
	build -ldflags "-s -w" -o "$tmp/bin/etcd" go.etcd.io/etcd/server/v3
	build -ldflags "-s -w" -o "$tmp/bin/etcdctl" go.etcd.io/etcd/etcdctl/v3
	build -ldflags "-s -w" -o "$tmp/bin/etcdutl" go.etcd.io/etcd/etcdutl/v3
	;;
coredns)
	build -ldflags "-s -w" -o "$tmp/bin/coredns" github.com/coredns/coredns
	;;
helm)
	ld="-s -w -X helm.sh/helm/v3/internal/version.version=$version"
	ld="$ld -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=34"
	build -ldflags "$ld" -o "$tmp/bin/helm" helm.sh/helm/v3/cmd/helm
	;;
minio)
	build -tags kqueue -ldflags "-s -w" -o "$tmp/bin/minio" github.com/minio/minio
	;;
chainsaw)
	build -ldflags "-s -w" -o "$tmp/bin/chainsaw" github.com/kyverno/chainsaw
	;;
registry)
	build -ldflags "-s -w -X github.com/distribution/distribution/v3/version.version=$version" \
		-o "$tmp/bin/registry" github.com/distribution/distribution/v3/cmd/registry
	;;
kube-router)
	# Only its NetworkPolicy firewall runs in the local cluster (iptables + ipset).
	build -ldflags "-s -w" -o "$tmp/bin/kube-router" github.com/cloudnativelabs/kube-router/v2/cmd/kube-router
	;;
kube-rbac-proxy)
	# The chart's metrics sidecar; version flags as upstream's Makefile sets them.
	ld="-s -w -X k8s.io/component-base/version.gitVersion=$version"
	ld="$ld -X k8s.io/component-base/version/verflag.programName=kube-rbac-proxy"
	build -ldflags "$ld" -o "$tmp/bin/kube-rbac-proxy" github.com/brancz/kube-rbac-proxy/cmd/kube-rbac-proxy
	;;
cert-manager)
	# The three commands in one go build (shared packages compile once); the
	# module's deploy/ tree (CRDs, chart) is copied beside them for the bed.
	ld="-s -w -X github.com/cert-manager/cert-manager/pkg/util.AppVersion=$version"
	(cd "$dir" && go build -trimpath -ldflags "$ld" -o "$tmp/bin/" \
		github.com/cert-manager/cert-manager/cmd/controller \
		github.com/cert-manager/cert-manager/cmd/webhook \
		github.com/cert-manager/cert-manager/cmd/cainjector)
	mv "$tmp/bin/controller" "$tmp/bin/cert-manager-controller"
	mv "$tmp/bin/webhook" "$tmp/bin/cert-manager-webhook"
	mv "$tmp/bin/cainjector" "$tmp/bin/cert-manager-cainjector"
	src=$(cd "$dir" && go list -m -f '{{.Dir}}' github.com/cert-manager/cert-manager)
	mkdir -p "$tmp/deploy"
	cp -r "$src/deploy/crds" "$src/deploy/charts" "$tmp/deploy/"
	chmod -R u+w "$tmp/deploy"
	;;
prometheus)
	# promtool alone (the chart's alerting rules: make rules-test); version
	# flags as upstream's .promu.yml sets them. remove_all_sd (upstream's tag)
	# leaves out the cloud service-discovery plugins and their SDKs, which rule
	# checks and rule unit tests never use: it roughly halves a cold build.
	# Module v0.MNN.P is Prometheus M.NN.P.
	pv=github.com/prometheus/common/version mn=${version#v0.}
	mn=${mn%%.*}
	ld="-s -w -X $pv.Version=${mn:0:1}.${mn:1}.${version##*.} -X $pv.Branch=HEAD -X $pv.BuildUser=etcd-operator"
	build -tags remove_all_sd -ldflags "$ld" -o "$tmp/bin/promtool" \
		github.com/prometheus/prometheus/cmd/promtool
	;;
prometheus-server)
	# The server for the monitoring bed (hack/monitoring.sh). Only the
	# kubernetes service discovery that prometheus-operator's generated
	# configuration uses (upstream's enable_kubernetes_sd tag); no builtinassets
	# tag: the web UI's assets are left out, the HTTP API is all the bed reads.
	pv=github.com/prometheus/common/version mn=${version#v0.}
	mn=${mn%%.*}
	ld="-s -w -X $pv.Version=${mn:0:1}.${mn:1}.${version##*.} -X $pv.Branch=HEAD -X $pv.BuildUser=etcd-operator"
	build -tags remove_all_sd,enable_kubernetes_sd -ldflags "$ld" -o "$tmp/bin/prometheus" \
		github.com/prometheus/prometheus/cmd/prometheus
	;;
prometheus-operator)
	# The operator and prometheus-config-reloader, and the module's CRDs (example/prometheus-operator-crd)
	# beside it for hack/monitoring.sh to apply. Version flags as upstream's
	# Makefile sets them.
	pv=github.com/prometheus/common/version
	ld="-s -w -X $pv.Version=${version#v} -X $pv.Branch=HEAD -X $pv.BuildUser=etcd-operator"
	# One go build for the operator and the config reloader it puts beside
	# every Prometheus (shared packages compile once).
	build -ldflags "$ld" -o "$tmp/bin/" \
		github.com/prometheus-operator/prometheus-operator/cmd/operator \
		github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader
	mv "$tmp/bin/operator" "$tmp/bin/prometheus-operator"
	src=$(cd "$dir" && go list -m -f '{{.Dir}}' github.com/prometheus-operator/prometheus-operator)
	cp -r "$src/example/prometheus-operator-crd" "$tmp/crds"
	chmod -R u+w "$tmp/crds"
	;;
lincheck)
	# Static (CGO_ENABLED=0 above): it runs in the e2e tools image.
	build -ldflags "-s -w" -o "$tmp/bin/lincheck" .
	;;
*)
	echo "build.sh: no recipe for '$tool'" >&2
	exit 2
	;;
esac

echo "build.sh: $tool $version built in $(($(date +%s) - start))s" >&2
touch "$tmp/.complete"
rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
echo "$out/bin"
exit 0
}
