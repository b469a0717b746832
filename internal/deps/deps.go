//go:build tools

// Package deps pins the project's third-party modules while the packages
// that use them are being written. It is never built.
package deps

import (
	_ "github.com/BurntSushi/toml"
	_ "github.com/HdrHistogram/hdrhistogram-go"
	_ "github.com/cespare/xxhash/v2"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/quickfixgo/enum"
	_ "github.com/quickfixgo/field"
	_ "github.com/quickfixgo/fix44"
	_ "github.com/quickfixgo/quickfix"
	_ "github.com/quickfixgo/tag"
)
