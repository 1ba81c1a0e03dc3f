//go:build tools

// Package tools pins Prometheus v3.16.0 (module v0.316.0): promtool for the
// chart's alerting-rule checks and unit tests (make rules-test), and the server
// for the monitoring bed (hack/monitoring.sh, e2e case operator/alerts-fire).
// Test infrastructure only; not product code.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/prometheus"
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
