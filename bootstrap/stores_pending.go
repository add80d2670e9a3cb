package bootstrap

import (
	"context"
	"errors"
	"log/slog"
)

// The Mongo adapter is being built; until it is wired here, asking for them is a clear error rather than a silent fallback.
func openMongo(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	return nil, nil, errors.New("HERALD_STORE=mongo is not wired into this build yet")
}
