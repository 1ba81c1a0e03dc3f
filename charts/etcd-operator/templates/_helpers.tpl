{{/* Chart name, overridable. */}}
{{- define "etcd-operator.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Full name: the release name when it already contains the chart name (release
"etcd-operator" gives Deployment "etcd-operator"), else "<release>-<chart>".
*/}}
{{- define "etcd-operator.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
Prefix of every RBAC object's name (ClusterRoles, ClusterRoleBindings, Roles, RoleBindings):
"<fullname>-cozy". The legacy aenix-io etcd-operator names its RBAC "etcd-operator-<role>"
(etcd-operator-manager-role, etcd-operator-leader-election-role, ...) in the same default
namespace, so "<fullname>-<role>" would take its objects over during a migration. No operator
uses the "-cozy-" infix; docs/installation.md.
*/}}
{{- define "etcd-operator.rbacPrefix" -}}
{{- printf "%s-cozy" (include "etcd-operator.fullname" .) -}}
{{- end -}}

{{- define "etcd-operator.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "etcd-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "etcd-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "etcd-operator.labels" -}}
helm.sh/chart: {{ include "etcd-operator.chart" . }}
{{ include "etcd-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
The operator image. Used for the manager container and for OPERATOR_IMAGE, so the two
can never differ.
*/}}
{{- define "etcd-operator.image" -}}
{{- $tag := default .Chart.AppVersion .Values.image.tag -}}
{{- if .Values.image.digest -}}
{{- printf "%s:%s@%s" .Values.image.repository $tag .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "etcd-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "etcd-operator.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* Metadata lines inserted into each CRD under "metadata:". */}}
{{- define "etcd-operator.crdMetadata" -}}
metadata:
{{- if .Values.crds.keep }}
  annotations:
    helm.sh/resource-policy: keep
{{- end }}
  labels:
    {{- include "etcd-operator.labels" . | nindent 4 }}
{{ end -}}

{{/*
The Secret holding kube-rbac-proxy's serving certificate (kubeRbacProxy.tls), or "" when the
proxy makes its own in memory.
*/}}
{{- define "etcd-operator.metricsTLSSecret" -}}
{{- if .Values.kubeRbacProxy.tls.secretName -}}
{{- .Values.kubeRbacProxy.tls.secretName -}}
{{- else if .Values.kubeRbacProxy.tls.certManager.enabled -}}
{{- printf "%s-metrics-tls" (include "etcd-operator.fullname" .) -}}
{{- end -}}
{{- end -}}

{{/* The metrics Service's DNS name: the proxy's certificate names it, the scraper checks it. */}}
{{- define "etcd-operator.metricsServiceHost" -}}
{{- printf "%s-metrics-service.%s.svc" (include "etcd-operator.fullname" .) .Release.Namespace -}}
{{- end -}}

{{/* The job label of the operator's own metrics (prometheus-operator: the Service's name). */}}
{{- define "etcd-operator.operatorJob" -}}
{{- printf "%s-metrics-service" (include "etcd-operator.fullname" .) -}}
{{- end -}}
