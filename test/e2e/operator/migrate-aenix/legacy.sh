#!/usr/bin/env bash
# legacy.sh <name> <replicas>: in $NAMESPACE, the objects the legacy operator
# (aenix-io/etcd-operator v0.4, internal/controller/factory) makes for an
# EtcdCluster.etcd.aenix.io with a volumeClaimTemplate: the EtcdCluster itself, and owned
# by it the ConfigMap <name>-cluster-state, the headless Service <name>-headless, the
# client Service <name>, the PodDisruptionBudget <name> and the StatefulSet <name> whose
# Pods run etcd as that operator runs it (peer auto-TLS, data dir
# /var/run/etcd/default.etcd on the PVC data-<name>-N). Waits for every Pod to be Ready.
# The legacy operator's own release (Deployment, RBAC, webhooks): legacy-release.sh.
set -euo pipefail
ns=${NAMESPACE:?}
name=$1
n=$2
image=${LEGACY_ETCD_IMAGE:-quay.io/coreos/etcd:v3.5.35}
labels="app.kubernetes.io/name: etcd, app.kubernetes.io/instance: $name, app.kubernetes.io/managed-by: etcd-operator"
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: etcd.aenix.io/v1alpha1
kind: EtcdCluster
metadata: {name: $name}
spec:
  replicas: $n
  storage:
    volumeClaimTemplate:
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 1Gi}}
YAML
uid=$(kubectl -n "$ns" get etcdclusters.etcd.aenix.io "$name" -o jsonpath='{.metadata.uid}')
owner="[{apiVersion: etcd.aenix.io/v1alpha1, kind: EtcdCluster, name: $name, uid: $uid, controller: true, blockOwnerDeletion: true}]"
initial=""
for ((i = 0; i < n; i++)); do
	initial="$initial${initial:+,}$name-$i=https://$name-$i.$name-headless.$ns.svc:2380"
done
kubectl -n "$ns" apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ConfigMap
metadata: {name: $name-cluster-state, ownerReferences: $owner}
data:
  ETCD_INITIAL_CLUSTER_STATE: new
  ETCD_INITIAL_CLUSTER: "$initial"
  ETCD_INITIAL_CLUSTER_TOKEN: $name-$ns
---
apiVersion: v1
kind: Service
metadata: {name: $name-headless, labels: {$labels}, ownerReferences: $owner}
spec:
  clusterIP: None
  publishNotReadyAddresses: true
  selector: {$labels}
  ports:
  - {name: peer, port: 2380, targetPort: 2380, protocol: TCP}
  - {name: client, port: 2379, targetPort: 2379, protocol: TCP}
---
apiVersion: v1
kind: Service
metadata: {name: $name, labels: {$labels}, ownerReferences: $owner}
spec:
  type: ClusterIP
  selector: {$labels}
  ports:
  - {name: client, port: 2379, targetPort: 2379, protocol: TCP}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: $name, labels: {$labels}, ownerReferences: $owner}
spec:
  minAvailable: $((n / 2 + 1))
  selector: {matchLabels: {$labels}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $name, labels: {$labels}, ownerReferences: $owner}
spec:
  replicas: $n
  serviceName: $name-headless
  podManagementPolicy: Parallel
  selector: {matchLabels: {$labels}}
  template:
    metadata: {labels: {$labels}}
    spec:
      containers:
      - name: etcd
        image: $image
        command: [etcd]
        args:
        - --name=\$(POD_NAME)
        - --listen-metrics-urls=http://0.0.0.0:2381
        - --listen-peer-urls=https://0.0.0.0:2380
        - --listen-client-urls=http://0.0.0.0:2379
        - --initial-advertise-peer-urls=https://\$(POD_NAME).$name-headless.\$(POD_NAMESPACE).svc:2380
        - --data-dir=/var/run/etcd/default.etcd
        - --advertise-client-urls=http://\$(POD_NAME).$name-headless.\$(POD_NAMESPACE).svc:2379
        - --peer-auto-tls
        - --auto-compaction-retention=5m
        - --snapshot-count=10000
        - --quota-backend-bytes=1020054732
        ports:
        - {name: peer, containerPort: 2380}
        - {name: client, containerPort: 2379}
        envFrom:
        - configMapRef: {name: $name-cluster-state}
        env:
        - name: POD_NAME
          valueFrom: {fieldRef: {fieldPath: metadata.name}}
        - name: POD_NAMESPACE
          valueFrom: {fieldRef: {fieldPath: metadata.namespace}}
        startupProbe: {httpGet: {path: "/readyz?serializable=false", port: 2381}, periodSeconds: 5}
        readinessProbe: {httpGet: {path: /readyz, port: 2381}, periodSeconds: 5}
        livenessProbe: {httpGet: {path: /livez, port: 2381}, periodSeconds: 5}
        volumeMounts:
        - {name: data, mountPath: /var/run/etcd}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
YAML
kubectl -n "$ns" rollout status statefulset "$name" --timeout=180s >/dev/null
kubectl -n "$ns" get statefulset "$name" -o jsonpath='{.status.readyReplicas}'
