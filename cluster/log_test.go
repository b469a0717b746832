package cluster

import (
	"io"
	"log/slog"
	"os"
)

func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

func debugLogger() *slog.Logger {
	if os.Getenv("DBG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return quietLogger()
}
