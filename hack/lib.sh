# Shared settings and helpers for the local cluster scripts (sourced, not run).
# shellcheck shell=bash

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/local/go/bin:$PATH

# Machine-wide state of the one local cluster. Kept out of the repository so
# that several clones (CI uses a fresh one) drive the same single cluster.
BASE=/var/lib/etcd-operator-dev
RUNDIR=/run/etcd-operator-dev
HOSTPATH_PV=/tmp/hostpath_pv # fixed by kube-controller-manager's hostPath provisioner

# PKI and configs belong to the running cluster, so they live with it; each
# clone gets a copy of the admin kubeconfig and a link to the logs.
PKI=$BASE/pki
CONF=$BASE/conf
LOGDIR=/var/log/etcd-operator-dev
LC=$REPO/.local-cluster
KUBECONFIG_FILE=$LC/kubeconfig
LOGS=$LC/logs

CONTAINERD_SOCK=$RUNDIR/containerd/containerd.sock
SERVICE_CIDR=10.96.0.0/16
KUBERNETES_SVC_IP=10.96.0.1
DNS_IP=10.96.0.10
POD_CIDR=10.88.0.0/16
CLUSTER_DOMAIN=cluster.local
ETCD_CLIENT_PORT=12379
ETCD_PEER_PORT=12380
PAUSE_IMAGE=registry.k8s.io/pause:3.10.1
# The bed's OCI registry (distribution, plain HTTP, loopback only): push with
# `make docker-push IMG=$REGISTRY/<name>:<tag>`; containerd pulls from it
# through $CONF/certs.d/$REGISTRY/hosts.toml.
REGISTRY_PORT=15000
REGISTRY=localhost:$REGISTRY_PORT

IMAGE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/etcd-operator/images

NODE_NAME=$(hostname | tr 'A-Z' 'a-z')
# The address of the default-route interface: the hostname resolves to
# 127.0.0.1 here, which the kubelet refuses as a node address.
NODE_IP=${NODE_IP:-$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* src \([0-9.]*\).*/\1/p')}
NODE_IF=${NODE_IF:-$(ip -4 route get 1.1.1.1 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p')}
NODE_MTU=$(cat "/sys/class/net/${NODE_IF:-eth0}/mtu" 2>/dev/null || echo 1500)

log() { printf '%s [%s] %s\n' "$(date -u +%H:%M:%S)" "${0##*/}" "$*" >&2; }
die() {
	log "error: $*"
	log "component logs: $LOGS (bundle them with 'make cluster-logs')"
	exit 1
}

tool_bin() { "$REPO/hack/tools/build.sh" "$1"; }

kc() { "$K8S_BIN/kubectl" --kubeconfig "$KUBECONFIG_FILE" "$@"; }
ctrk() { ctr --address "$CONTAINERD_SOCK" -n k8s.io "$@"; }

# wait_for <seconds> <description> <command...>: poll until the command succeeds.
wait_for() {
	local limit=$1 what=$2
	shift 2
	local deadline=$(($(date +%s) + limit))
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			die "timed out after ${limit}s waiting for $what"
		fi
		sleep 0.5
	done
}

# Image archives are cached by name and content key, so re-importing after
# cluster-down costs one `ctr import` and no rebuild.
# image_archive <name:tag> <key> -> path of the cached docker-archive
image_archive() {
	local safe
	safe=$(echo "$1" | tr '/:' '__')
	echo "$IMAGE_CACHE/$safe-$2.tar"
}

# build_image <ref> <key> <rootfs-dir> <entrypoint-json> <user> [cmd-json] [env...]
# Assembles an image from a prepared root filesystem with buildah (no
# Dockerfile, no registry), caches its archive and imports it into containerd.
build_image_from_dir() {
	local ref=$1 key=$2 root=$3 entry=$4 user=$5 cmd=${6:-} archive c
	shift 6 || shift $#
	archive=$(image_archive "$ref" "$key")
	if [ ! -f "$archive" ]; then
		mkdir -p "$IMAGE_CACHE"
		c=$(buildah from scratch)
		buildah copy "$c" "$root" / >/dev/null
		buildah config --entrypoint "$entry" --user "$user" "$c"
		[ -n "$cmd" ] && buildah config --cmd "$cmd" "$c"
		local e
		for e in "$@"; do buildah config --env "$e" "$c"; done
		buildah commit -q "$c" "$ref" >/dev/null
		buildah rm "$c" >/dev/null
		rm -f "$archive.tmp"
		buildah push -q "$ref" "docker-archive:$archive.tmp:$ref"
		mv "$archive.tmp" "$archive"
	fi
	import_archive "$archive"
}

import_archive() {
	ctrk images import --no-unpack=false "$1" >/dev/null
	# The worker nodes' containerds (hack/nodes.sh), when there are any. A worker a
	# fault case powered off (nodes.sh stop leaves its socket behind) is skipped: it
	# imports every image again when it is powered on (nodes.sh start).
	local s node
	for s in "$RUNDIR"/nodes/worker-*/containerd/containerd.sock; do
		[ -S "$s" ] || continue
		node=${s%/containerd/containerd.sock}
		[ -f "$node/power" ] && continue
		ctr --address "$s" -n k8s.io images import --no-unpack=false "$1" >/dev/null ||
			echo "import_archive: ${node##*/} did not take $1 (down?); it imports again when started" >&2
	done
	return 0
}

# The operator image the local cluster runs: one tag per source revision, so
# a helm upgrade rolls the Deployment whenever the code changed.
OPERATOR_IMAGE_REPO=ghcr.io/cozystack/etcd-operator
# The hash of everything the Dockerfile copies into the operator image.
operator_source_key() {
	(cd "$REPO" && cat Dockerfile Makefile $(find src cmd -type f | sort)) | sha256sum | cut -c1-12
}
operator_image_ref() {
	echo "$OPERATOR_IMAGE_REPO:dev-$(operator_source_key | cut -c1-10)"
}

# cluster_lock: one checkout at a time deploys its operator to the machine's
# one local cluster and runs tests or benchmarks against it (several clones or
# worktrees share the cluster). Held until the calling script exits; nested
# scripts inherit it.
cluster_lock() {
	[ -n "${EO_CLUSTER_LOCKED:-}" ] && return 0
	exec 8>/tmp/etcd-operator-cluster.lock
	if ! flock -n 8; then
		log "waiting for another checkout's use of the local cluster to finish (/tmp/etcd-operator-cluster.lock)"
		flock 8
	fi
	export EO_CLUSTER_LOCKED=1
}
