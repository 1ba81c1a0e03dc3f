//go:build tools

// Package tools pins prometheus-operator v0.85.0 for the monitoring bed
// (hack/monitoring.sh, the e2e case operator/alerts-fire): it turns the chart's
// PodMonitor/ServiceMonitor/PrometheusRule into the configuration of a
// Prometheus (hack/tools/prometheus). Test infrastructure only; not product code.
package tools

import (
	_ "github.com/prometheus-operator/prometheus-operator/cmd/operator"
	_ "github.com/prometheus-operator/prometheus-operator/cmd/prometheus-config-reloader"
)
