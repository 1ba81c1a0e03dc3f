#!/usr/bin/env bash
# Proves the local bed's registry path end to end, the way the installation
# guide uses it: `make docker-build docker-push IMG=localhost:15000/...`, then a
# Pod that must pull that image from the registry (it is first removed from the
# node's containerd) and run it. Uses its own namespace and deletes it after.
#
#   hack/registry-test.sh
set -euo pipefail
# shellcheck source=hack/lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$KUBECONFIG_FILE" ] || die "no local cluster; run 'make cluster-up'"
K8S_BIN=$(tool_bin kubernetes)
img=$REGISTRY/etcd-operator:registry-test
ns=eo-registry-test-$$
trap 'kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true' EXIT

curl -fsS "http://$REGISTRY/v2/" >/dev/null || die "the registry at $REGISTRY does not answer (hack/cluster.sh status)"
# Unset KUBECONFIG: the targets must use the bed, whatever the caller's is.
env -u KUBECONFIG IMG="$img" "$REPO/hack/install.sh" docker-build
env -u KUBECONFIG IMG="$img" "$REPO/hack/install.sh" docker-push
tags=$(curl -fsS "http://$REGISTRY/v2/etcd-operator/tags/list")
grep -q '"registry-test"' <<<"$tags" || die "the registry does not list the pushed tag: $tags"

# Not in containerd any more: the Pod below can only start by pulling it.
ctrk images rm "$img" >/dev/null 2>&1 || true
! ctrk images ls -q | grep -qx "$img" || die "could not remove $img from containerd"

kc create namespace "$ns" >/dev/null
kc -n "$ns" apply -f - >/dev/null <<EOF
apiVersion: batch/v1
kind: Job
metadata: {name: pull}
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      securityContext: {runAsNonRoot: true, seccompProfile: {type: RuntimeDefault}}
      containers:
      - name: operator
        image: $img
        imagePullPolicy: Always
        args: ["--version"]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
EOF
if ! kc -n "$ns" wait --for condition=Complete --timeout 120s job/pull >/dev/null; then
	kc -n "$ns" get events --sort-by .lastTimestamp >&2 || true
	die "the Job pulling $img did not complete"
fi
out=$(kc -n "$ns" logs job/pull)
grep -q '^etcd-operator ' <<<"$out" || die "unexpected output from the pulled image: $out"
pulled=$(kc -n "$ns" get events --field-selector reason=Pulled -o jsonpath='{.items[*].message}')
grep -q "Successfully pulled image \"$img\"" <<<"$pulled" || die "no 'Successfully pulled' event for $img: $pulled"
log "ok: pushed $img, the node pulled it from $REGISTRY and ran it ($out)"
