package bootstrap

import (
	"context"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
)

// memoryKind keeps everything in the server's memory: for tests and
// demos. Nothing outside the process can reach it, so a maintenance
// command cannot open it, and it has no schema.
type memoryKind struct{}

func (memoryKind) check(Config) error { return nil }

func (memoryKind) open(_ context.Context, _ Config, log *slog.Logger, owner bool) (store, error) {
	if !owner {
		return nil, ErrMemoryStore
	}
	log.Warn("storage is in memory: every account, post and queued delivery is lost when the process exits",
		"hint", "leave HERALD_STORE unset (sqlite, in HERALD_DATA_DIR), or set it to postgres or mongo, to keep data")
	return memoryStore{}, nil
}

func (memoryKind) backup(context.Context, Config, string) (BackupResult, error) {
	return BackupResult{}, ErrMemoryStore
}

type memoryStore struct{}

func (memoryStore) close() {}

func (memoryStore) ports() *Stores {
	return withFamilies(&Stores{
		Names:      memory.NewNameRegistry(),
		Instances:  memory.NewInstanceStore(),
		Followers:  memory.NewFollowerStore(),
		FanOuts:    memory.NewFanOutStore(),
		Moderation: memory.NewModerationStore(),
		Reports:    memory.NewReportStore(),
		Blocks:     memory.NewBlockStore(),
		OAuth:      memory.NewOAuthStore(),
		AccountIDs: memory.NewAccountIDStore(),
		Pinger:     memory.Pinger{},
		PurgeEvery: time.Hour,

		// The client API's notifications (issue 34).
		Notifications: memory.NewNotificationStore(),
	}, memory.NewJobStore(), memory.NewAccountStore(), memory.NewContentStore())
}
