//go:build tools

// Package tools pins chainsaw v0.2.15 for the local test infrastructure; not product code.
package tools

import (
	_ "github.com/kyverno/chainsaw"
)
