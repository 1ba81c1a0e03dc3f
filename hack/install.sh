#!/usr/bin/env bash
# The installation guide's targets (docs/installation.md), against whatever
# cluster the kubeconfig names: $KUBECONFIG when set, else the local bed's
# (.local-cluster/kubeconfig).
#
#   hack/install.sh install       server-side apply the CRDs
#   hack/install.sh uninstall     delete the CRDs; refuses while any object of
#                                 their kinds exists (FORCE=1 overrides)
#   hack/install.sh deploy        helm upgrade --install the chart with IMG
#   hack/install.sh undeploy      helm uninstall (the CRDs stay); refuses while
#                                 EtcdClusters exist (FORCE=1 overrides)
#   hack/install.sh run           bin/etcd-operator on this host against the kubeconfig
#   hack/install.sh dist          dist/etcd-operator{,.crds,.non-crds}.yaml
#   hack/install.sh docker-build  build IMG from the Dockerfile with buildah (hack/operator-image.sh)
#   hack/install.sh docker-push   push the built IMG with skopeo
#
# Variables: IMG (<repository>:<tag>), NAMESPACE (etcd-operator-system),
# HELM_RELEASE (etcd-operator), HELM_ARGS (extra helm flags), FORCE,
# PUSH_TLS_VERIFY (true; false for a plain-HTTP registry, automatic for the bed's),
# RUN_LEADER_ELECT (auto|true|false), RUN_ARGS (extra operator flags),
# KUBECTL and HELM (binaries; default: the pinned builds of hack/tools/build.sh).
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"
# These targets may act on any cluster: no pointer to the local bed's logs.
die() {
	log "error: $*"
	exit 1
}

cmd=${1:?usage: install.sh install|uninstall|deploy|undeploy|run|dist}
NAMESPACE=${NAMESPACE:-etcd-operator-system}
HELM_RELEASE=${HELM_RELEASE:-etcd-operator}
GROUP=etcd-operator.cozystack.io
CRD_DIR=$REPO/charts/etcd-operator/crd-bases
# The plural of every CRD the chart carries (etcdclusters, etcdmembers, ...).
mapfile -t CRDS < <(for f in "$CRD_DIR"/*.yaml; do sed -n "s/^  name: \(.*\)\.$GROUP\$/\1/p" "$f" | head -n1; done)
[ "${#CRDS[@]}" -gt 0 ] || die "no CRDs found under $CRD_DIR"

# The kubeconfig: the user's, else the local bed's. Said out loud, so nobody
# installs into the wrong cluster by surprise.
target_kubeconfig() {
	if [ -n "${KUBECONFIG:-}" ]; then
		KCFG=${KUBECONFIG%%:*}
	elif [ -f "$KUBECONFIG_FILE" ]; then
		KCFG=$KUBECONFIG_FILE
	elif [ -f "$HOME/.kube/config" ]; then
		KCFG=$HOME/.kube/config
	else
		die "no kubeconfig: set KUBECONFIG, or start the local cluster with 'make cluster-up'"
	fi
	[ -f "$KCFG" ] || die "kubeconfig $KCFG does not exist"
	export KUBECONFIG=$KCFG
	KUBECTL=${KUBECTL:-$(tool_bin kubernetes)/kubectl}
	local ctx server
	ctx=$("$KUBECTL" config current-context 2>/dev/null || echo "?")
	server=$("$KUBECTL" config view --minify -o jsonpath='{.clusters[0].cluster.server}' 2>/dev/null || echo "?")
	log "target cluster: context $ctx, server $server (kubeconfig $KCFG)"
}

k() { "$KUBECTL" "$@"; }

# local_bed: true when the kubeconfig is the local bed's.
local_bed() { [ "$(realpath "$KCFG")" = "$(realpath "$KUBECONFIG_FILE" 2>/dev/null)" ]; }

# count_objects <plural>: how many objects of that kind exist (0 when the CRD is absent).
count_objects() {
	k get "$1.$GROUP" -A --no-headers 2>/dev/null | grep -c . || true
}

split_img() {
	[ -n "${IMG:-}" ] || die "IMG=<repository>:<tag> is required (the image the cluster pulls; see 'make docker-build docker-push')"
	case ${IMG##*/} in
	*:*) ;;
	*) die "IMG=$IMG has no tag: use <repository>:<tag>" ;;
	esac
	IMAGE_REPO=${IMG%:*}
	IMAGE_TAG=${IMG##*:}
}

install_crds() {
	target_kubeconfig
	# Server-side: the schemas exceed the client-side last-applied annotation's
	# limit. --force-conflicts takes over fields a Helm release set before.
	k apply --server-side --force-conflicts --field-manager etcd-operator-install -f "$CRD_DIR" >&2
	local c
	for c in "${CRDS[@]}"; do
		k wait --for condition=Established --timeout 60s "crd/$c.$GROUP" >/dev/null
	done
	log "CRDs installed and Established: ${CRDS[*]/%/.$GROUP}"
}

uninstall_crds() {
	target_kubeconfig
	local c n present="" left=""
	for c in "${CRDS[@]}"; do
		k get "crd/$c.$GROUP" >/dev/null 2>&1 || continue
		present="$present crd/$c.$GROUP"
		n=$(count_objects "$c")
		[ "$n" -gt 0 ] && left="$left $n $c;"
	done
	if [ -z "$present" ]; then
		log "no etcd-operator CRDs in this cluster; nothing to do"
		return 0
	fi
	if [ -n "$left" ]; then
		if [ "${FORCE:-}" != 1 ]; then
			log "refusing: objects still exist:$left deleting the CRDs deletes every one of them, and the garbage collector then deletes their Pods and PVCs (the etcd data)"
			k get "etcdclusters.$GROUP" -A >&2 || true
			die "delete the clusters first (kubectl delete etcdclusters.$GROUP --all -A, with the operator still running), or run again with FORCE=1"
		fi
		log "FORCE=1: deleting the CRDs although objects still exist:$left"
	fi
	# shellcheck disable=SC2086
	k delete --wait=true $present >&2
	log "CRDs deleted:$present"
}

deploy() {
	target_kubeconfig
	if [ -z "${IMG:-}" ] && local_bed; then
		log "IMG not set and the target is the local bed: building and importing the image (hack/deploy-operator.sh)"
		exec "$REPO/hack/deploy-operator.sh"
	fi
	split_img
	# The bed is shared: one checkout's operator at a time (hack/lib.sh).
	local_bed && cluster_lock
	HELM=${HELM:-$(tool_bin helm)/helm}
	# The chart's default kube-rbac-proxy sidecar: on the local bed its image is
	# built from the pinned module and imported (hack/images.sh); elsewhere the
	# cluster pulls it like any image.
	if local_bed; then
		"$REPO/hack/images.sh" kube-rbac-proxy
	fi
	log "helm upgrade --install $HELM_RELEASE ($IMG) in namespace $NAMESPACE"
	# shellcheck disable=SC2086
	"$HELM" upgrade --install "$HELM_RELEASE" "$REPO/charts/etcd-operator" \
		--namespace "$NAMESPACE" --create-namespace \
		--set image.repository="$IMAGE_REPO" --set image.tag="$IMAGE_TAG" \
		${HELM_ARGS:-} --wait --timeout 3m >/dev/null ||
		{
			k -n "$NAMESPACE" get pods -o wide >&2 || true
			k -n "$NAMESPACE" describe pods -l control-plane=controller-manager 2>/dev/null | tail -20 >&2 || true
			die "the operator did not become ready (an ImagePullBackOff above means the cluster cannot pull $IMG)"
		}
	log "operator ready: $(k -n "$NAMESPACE" get deploy "$HELM_RELEASE" -o jsonpath='{.spec.template.spec.containers[*].image}')"
}

undeploy() {
	target_kubeconfig
	local_bed && cluster_lock
	HELM=${HELM:-$(tool_bin helm)/helm}
	if ! "$HELM" status "$HELM_RELEASE" --namespace "$NAMESPACE" >/dev/null 2>&1; then
		log "no Helm release $HELM_RELEASE in namespace $NAMESPACE; nothing to do"
		return 0
	fi
	local n
	n=$(count_objects etcdclusters)
	if [ "$n" -gt 0 ]; then
		if [ "${FORCE:-}" != 1 ]; then
			k get "etcdclusters.$GROUP" -A >&2 || true
			die "refusing: $n EtcdCluster(s) still exist; without the operator their EtcdMembers keep a finalizer nothing removes. Delete them first, or run again with FORCE=1"
		fi
		log "FORCE=1: uninstalling although $n EtcdCluster(s) exist (their member finalizers will stay until the operator returns)"
	fi
	"$HELM" uninstall "$HELM_RELEASE" --namespace "$NAMESPACE" --wait >&2
	log "release $HELM_RELEASE uninstalled from $NAMESPACE; the CRDs stay (make uninstall removes them)"
}

run_operator() {
	target_kubeconfig
	local bin=$REPO/bin/etcd-operator
	[ -x "$bin" ] || die "$bin is missing (make builds it)"
	# Snapshot Jobs and restore init containers run OPERATOR_IMAGE: it must be
	# an image the cluster can pull.
	local image=${IMG:-${OPERATOR_IMAGE:-}}
	if [ -z "$image" ]; then
		image=$OPERATOR_IMAGE_REPO:$(sed -n 's/^appVersion: "\(.*\)"/\1/p' "$REPO/charts/etcd-operator/Chart.yaml")
		log "IMG not set: snapshot Jobs and restore init containers will run $image"
	fi
	local le=${RUN_LEADER_ELECT:-auto} args=()
	if [ "$le" = auto ]; then
		# With an installed operator's namespace present, share its Lease and
		# stand by while that operator leads; without it, nobody else can lead.
		if k get namespace "$NAMESPACE" >/dev/null 2>&1; then le=true; else le=false; fi
	fi
	case $le in
	true)
		args+=(--leader-elect=true --leader-election-namespace="$NAMESPACE")
		log "leader election on (Lease in $NAMESPACE, identity <hostname>_<random>): this process stands by while another operator holds the Lease"
		;;
	false)
		args+=(--leader-elect=false)
		log "leader election off: make sure no other operator reconciles this cluster"
		;;
	*) die "RUN_LEADER_ELECT must be auto, true or false (got '$le')" ;;
	esac
	# Ports away from the usual 8080/8081 (and the bed's 18080), so nothing else on the host collides.
	args+=(--metrics-bind-address="${RUN_METRICS_ADDR:-127.0.0.1:28080}"
		--health-probe-bind-address="${RUN_HEALTH_ADDR:-127.0.0.1:28081}"
		--kubeconfig="$KCFG" --operator-image="$image")
	log "exec $bin ${args[*]} ${RUN_ARGS:-}"
	# shellcheck disable=SC2086
	exec "$bin" "${args[@]}" ${RUN_ARGS:-}
}

dist() {
	HELM=${HELM:-$(tool_bin helm)/helm}
	local out=$REPO/dist sets=()
	if [ -n "${IMG:-}" ]; then
		split_img
		sets=(--set image.repository="$IMAGE_REPO" --set image.tag="$IMAGE_TAG")
	fi
	"$REPO/hack/sync-crds.sh" --check
	mkdir -p "$out"
	local tmp
	tmp=$(mktemp -d)
	local header="# Rendered from charts/etcd-operator by 'make build-dist-manifests'; apply with kubectl apply --server-side -f"
	# shellcheck disable=SC2086
	{
		echo "$header etcd-operator.yaml"
		"$HELM" template "$HELM_RELEASE" "$REPO/charts/etcd-operator" --namespace "$NAMESPACE" \
			--set namespace.create=true "${sets[@]}" ${HELM_ARGS:-}
	} >"$tmp/etcd-operator.yaml"
	# shellcheck disable=SC2086
	{
		echo "$header etcd-operator.crds.yaml"
		"$HELM" template "$HELM_RELEASE" "$REPO/charts/etcd-operator" --namespace "$NAMESPACE" \
			--show-only templates/crds.yaml "${sets[@]}" ${HELM_ARGS:-}
	} >"$tmp/etcd-operator.crds.yaml"
	# shellcheck disable=SC2086
	{
		echo "$header etcd-operator.non-crds.yaml (after the CRDs)"
		"$HELM" template "$HELM_RELEASE" "$REPO/charts/etcd-operator" --namespace "$NAMESPACE" \
			--set namespace.create=true --set crds.enabled=false "${sets[@]}" ${HELM_ARGS:-}
	} >"$tmp/etcd-operator.non-crds.yaml"
	local f
	for f in "$tmp"/*.yaml; do mv "$f" "$out/"; done
	rmdir "$tmp"
	log "wrote dist/etcd-operator.yaml ($(grep -c '^kind:' "$out/etcd-operator.yaml") objects), dist/etcd-operator.crds.yaml, dist/etcd-operator.non-crds.yaml${IMG:+ for image $IMG}"
}

docker_build() {
	split_img
	# Cached by the hash of the sources the Dockerfile copies; imported into the
	# local bed's containerd when the bed is up.
	"$REPO/hack/operator-image.sh" "$IMG"
	log "built $IMG: $(image_archive "$IMG" "$(operator_source_key)")"
}

docker_push() {
	split_img
	local archive
	archive=$(image_archive "$IMG" "$(operator_source_key)")
	[ -f "$archive" ] || die "no image $IMG built from the current sources ($archive missing): run 'make docker-build IMG=$IMG' first"
	local verify=${PUSH_TLS_VERIFY:-}
	if [ -z "$verify" ]; then
		case ${IMG%%/*} in
		"$REGISTRY" | "127.0.0.1:$REGISTRY_PORT") verify=false ;; # the bed's plain-HTTP registry
		*) verify=true ;;
		esac
	fi
	local digest
	digest=$(mktemp)
	# shellcheck disable=SC2064
	trap "rm -f '$digest'" EXIT
	log "skopeo copy docker-archive:$archive docker://$IMG (tls-verify=$verify)"
	skopeo copy --quiet --dest-tls-verify="$verify" --digestfile "$digest" \
		"docker-archive:$archive" "docker://$IMG" >&2 ||
		die "push to $IMG failed (credentials: skopeo login / REGISTRY_AUTH_FILE; a plain-HTTP registry needs PUSH_TLS_VERIFY=false)"
	log "pushed $IMG@$(cat "$digest")"
}

case $cmd in
docker-build) docker_build ;;
docker-push) docker_push ;;
install) install_crds ;;
uninstall) uninstall_crds ;;
deploy) deploy ;;
undeploy) undeploy ;;
run) run_operator ;;
dist) dist ;;
*)
	echo "usage: $0 install|uninstall|deploy|undeploy|run|dist" >&2
	exit 2
	;;
esac
