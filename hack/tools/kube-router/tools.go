//go:build tools

// Package tools pins kube-router v2.1.0 for the local test infrastructure (its NetworkPolicy
// firewall only: --run-firewall); not product code.
package tools

import (
	_ "github.com/cloudnativelabs/kube-router/v2/cmd/kube-router"
)
