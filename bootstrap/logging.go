package bootstrap

import (
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/lmittmann/tint"
)

// NewLogger returns the process logger: tint (colored text) when the output
// is a terminal or text is asked for, JSON otherwise (production).
func NewLogger(cfg Config, out *os.File) *slog.Logger {
	return newLogger(cfg, out, isTerminal(out))
}

func newLogger(cfg Config, out io.Writer, terminal bool) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	format := cfg.LogFormat
	if format == "auto" || format == "" {
		format = "json"
		if terminal {
			format = "text"
		}
	}
	if format == "text" {
		return slog.New(tint.NewTextHandler(out, &tint.Options{Level: level, TimeFormat: time.TimeOnly, NoColor: !terminal}))
	}
	return slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level}))
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
