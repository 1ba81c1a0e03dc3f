//go:build tools

// Package tools pins kube-rbac-proxy v0.22.1 (the chart's metrics sidecar) for the
// local test infrastructure; not product code.
package tools

import (
	_ "github.com/brancz/kube-rbac-proxy/cmd/kube-rbac-proxy"
)
