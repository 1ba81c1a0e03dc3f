//go:build tools

// Package tools pins cert-manager v1.11.5 (controller, webhook, cainjector) for the local test
// infrastructure; not product code. v1.11.5 is the newest release whose commands are packages
// of the published module: from v1.12 on each command is a module of its own, never tagged
// and tied to the main module by replace directives, so the module proxy cannot serve it.
package tools

import (
	_ "github.com/cert-manager/cert-manager/cmd/cainjector"
	_ "github.com/cert-manager/cert-manager/cmd/controller"
	_ "github.com/cert-manager/cert-manager/cmd/webhook"
)
