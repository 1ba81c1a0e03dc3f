//go:build tools

// Package tools pins helm v3.22.0 for the local test infrastructure; not product code.
package tools

import (
	_ "helm.sh/helm/v3/cmd/helm"
)
