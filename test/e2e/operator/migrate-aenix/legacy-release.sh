#!/usr/bin/env bash
# legacy-release.sh up|down: the rest of the legacy operator's release as its own release
# manifest lays it out (aenix-io/etcd-operator v0.4, kustomize namePrefix "etcd-operator-"),
# under the real names, so the migration meets what a user meets (issue 24):
#  - the CRD etcdclusters.etcd.aenix.io with its conversion settings (strategy Webhook, the
#    webhook Service, path /convert);
#  - the ServiceAccount, ClusterRoles, ClusterRoleBindings and the leader-election Role
#    under their real names (etcd-operator-manager-role, ...);
#  - the Services etcd-operator-webhook-service and
#    etcd-operator-controller-manager-metrics-service, selecting the legacy operator's Pods
#    by control-plane=controller-manager (nothing serves them here: no endpoints once the
#    Deployment is scaled to 0, connection refused before);
#  - the MutatingWebhookConfiguration and ValidatingWebhookConfiguration of the legacy
#    EtcdClusters (failurePolicy Fail) calling that Service;
#  - the Deployment etcd-operator-controller-manager (a stand-in container, 1 replica).
# The namespaced objects go to $NAMESPACE (not etcd-operator-system, where the shared
# operator of the other cases runs), and the webhooks carry a namespaceSelector for it (the
# real ones have none) so that cases running beside this one are not refused. `down` removes
# the cluster-scoped ones. Run it only against an operator deployed from this tree: its chart
# names its own RBAC <release>-cozy-<role>, an older chart used the legacy names.
set -euo pipefail
ns=${NAMESPACE:?}
p=etcd-operator
cluster_scoped() {
	kubectl delete --ignore-not-found --wait=false \
		mutatingwebhookconfiguration/$p-mutating-webhook-configuration \
		validatingwebhookconfiguration/$p-validating-webhook-configuration \
		clusterrolebinding/$p-manager-rolebinding clusterrolebinding/$p-proxy-rolebinding \
		clusterrole/$p-manager-role clusterrole/$p-metrics-reader clusterrole/$p-proxy-role >/dev/null
}
if [ "${1:-}" = down ]; then
	cluster_scoped
	exit 0
fi
kubectl patch crd etcdclusters.etcd.aenix.io --type=merge -p "{\"spec\":{\"conversion\":{\"strategy\":\"Webhook\",\"webhook\":{\"conversionReviewVersions\":[\"v1\"],\"clientConfig\":{\"service\":{\"namespace\":\"$ns\",\"name\":\"$p-webhook-service\",\"path\":\"/convert\"}}}}}}" >/dev/null
labels="app.kubernetes.io/created-by: etcd-operator, app.kubernetes.io/part-of: etcd-operator, app.kubernetes.io/managed-by: kustomize"
kubectl apply -f - >/dev/null <<YAML
apiVersion: v1
kind: ServiceAccount
metadata: {name: $p-controller-manager, namespace: $ns, labels: {$labels}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $p-manager-role}
rules:
- apiGroups: [etcd.aenix.io]
  resources: [etcdclusters, etcdclusters/status, etcdclusters/finalizers]
  verbs: [create, delete, get, list, patch, update, watch]
- apiGroups: ["", apps, policy]
  resources: [configmaps, services, statefulsets, poddisruptionbudgets]
  verbs: [create, delete, get, list, patch, update, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $p-metrics-reader, labels: {$labels}}
rules:
- nonResourceURLs: [/metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: $p-proxy-role, labels: {$labels}}
rules:
- apiGroups: [authentication.k8s.io]
  resources: [tokenreviews]
  verbs: [create]
- apiGroups: [authorization.k8s.io]
  resources: [subjectaccessreviews]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $p-manager-rolebinding, labels: {$labels}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $p-manager-role}
subjects: [{kind: ServiceAccount, name: $p-controller-manager, namespace: $ns}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: $p-proxy-rolebinding, labels: {$labels}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: $p-proxy-role}
subjects: [{kind: ServiceAccount, name: $p-controller-manager, namespace: $ns}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: $p-leader-election-role, namespace: $ns, labels: {$labels}}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, list, watch, create, update, patch, delete]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: $p-leader-election-rolebinding, namespace: $ns, labels: {$labels}}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: $p-leader-election-role}
subjects: [{kind: ServiceAccount, name: $p-controller-manager, namespace: $ns}]
---
apiVersion: v1
kind: Service
metadata: {name: $p-webhook-service, namespace: $ns, labels: {$labels}}
spec:
  selector: {control-plane: controller-manager}
  ports: [{port: 443, protocol: TCP, targetPort: 9443}]
---
apiVersion: v1
kind: Service
metadata: {name: $p-controller-manager-metrics-service, namespace: $ns, labels: {control-plane: controller-manager}}
spec:
  selector: {control-plane: controller-manager}
  ports: [{name: https, port: 8443, protocol: TCP, targetPort: https}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: $p-controller-manager, namespace: $ns, labels: {control-plane: controller-manager}}
spec:
  replicas: 1
  selector: {matchLabels: {control-plane: controller-manager}}
  template:
    metadata: {labels: {control-plane: controller-manager}}
    spec:
      serviceAccountName: $p-controller-manager
      containers:
      - name: manager
        image: localhost/etcd-operator-dev/busybox:1.35
        command: [sh, -c, "sleep 3600"]
        readinessProbe: {exec: {command: ["true"]}, periodSeconds: 1}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: $p-mutating-webhook-configuration
  annotations: {cert-manager.io/inject-ca-from: $ns/$p-serving-cert}
webhooks:
- name: metcdcluster.kb.io
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: $p-webhook-service, namespace: $ns, path: /mutate-etcd-aenix-io-v1alpha1-etcdcluster}
  failurePolicy: Fail
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  sideEffects: None
  rules:
  - {apiGroups: [etcd.aenix.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcdclusters]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: $p-validating-webhook-configuration
  annotations: {cert-manager.io/inject-ca-from: $ns/$p-serving-cert}
webhooks:
- name: vetcdcluster.kb.io
  admissionReviewVersions: [v1]
  clientConfig:
    service: {name: $p-webhook-service, namespace: $ns, path: /validate-etcd-aenix-io-v1alpha1-etcdcluster}
  failurePolicy: Fail
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: $ns}}
  sideEffects: None
  rules:
  - {apiGroups: [etcd.aenix.io], apiVersions: [v1alpha1], operations: [CREATE, UPDATE], resources: [etcdclusters]}
YAML
kubectl -n "$ns" rollout status deployment $p-controller-manager --timeout=120s >/dev/null
# the webhooks are in force: an update of the legacy EtcdCluster is refused
if kubectl -n "$ns" annotate etcdclusters.etcd.aenix.io "$1" probe=1 >/dev/null 2>&1; then
	echo "the legacy webhooks did not refuse an update" >&2
	exit 1
fi
echo webhooks-in-force
