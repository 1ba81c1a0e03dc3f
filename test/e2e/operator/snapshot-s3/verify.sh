#!/bin/sh
# verify.sh <snapshot>: download the snapshot's S3 object with the operator image's
# restore-agent (which checks etcd's integrity hash) into an emptyDir, hash it there with
# busybox, and print "<sizeBytes> sha256:<hex>" of the downloaded bytes.
set -eu
snap=$1
img=$(kubectl -n etcd-operator-system get deploy etcd-operator \
	-o jsonpath='{.spec.template.spec.containers[?(@.name=="manager")].image}')
key=$(kubectl -n "$NAMESPACE" get etcdsnapshot.etcd-operator.cozystack.io "$snap" \
	-o jsonpath='{.status.artifact.uri}' | sed 's|^s3://snaps/||')
kubectl -n "$NAMESPACE" delete pod "verify-$snap" --ignore-not-found >/dev/null
cat <<YAML | kubectl -n "$NAMESPACE" apply -f - >/dev/null
apiVersion: v1
kind: Pod
metadata: {name: verify-$snap}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 65532, runAsGroup: 65532, fsGroup: 65532}
  initContainers:
  - name: download
    image: $img
    args: [restore-agent, --data-dir, /w/data, --staging-dir, /w/stage, --s3-endpoint,
           "http://minio:9000", --s3-bucket, snaps, --s3-key, "$key", --s3-force-path-style,
           --s3-insecure,
           --credentials-dir, /creds]
    volumeMounts: [{name: w, mountPath: /w}, {name: creds, mountPath: /creds}]
  containers:
  - name: hash
    image: localhost/etcd-operator-dev/busybox:1.35
    imagePullPolicy: Never
    command: [sh, -c, 'echo "\$(stat -c %s /w/stage/snapshot.db) sha256:\$(sha256sum /w/stage/snapshot.db | cut -d" " -f1)"']
    volumeMounts: [{name: w, mountPath: /w}]
  volumes:
  - {name: w, emptyDir: {}}
  - {name: creds, secret: {secretName: s3-creds}}
YAML
kubectl -n "$NAMESPACE" wait --for=jsonpath='{.status.phase}'=Succeeded "pod/verify-$snap" --timeout=90s >/dev/null
kubectl -n "$NAMESPACE" logs "verify-$snap" -c hash
