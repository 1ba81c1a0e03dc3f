//go:build tools

// Package tools pins promtool (Prometheus v3.16.0, module v0.316.0) for the
// chart's alerting-rule checks and unit tests (make rules-test); not product code.
package tools

import (
	_ "github.com/prometheus/prometheus/cmd/promtool"
)
