package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/ports"
)

// Stores are the repository ports of the configured store. Only this file
// knows which adapter is behind them.
type Stores struct {
	Jobs      ports.JobStore
	JobAdmin  ports.JobAdmin
	Names     ports.NameRegistry
	Instances ports.InstanceStore
	Followers ports.FollowerStore
	FanOuts   ports.FanOutStore
	Users     ports.UserStore
	Tokens    ports.TokenStore
	Actors    ports.ActorStore
	Foreign   ports.ForeignActorStore
	Posts     ports.PostStore
	// Tombstones remember deleted remote objects and actors (SPEC §10).
	Tombstones ports.TombstoneStore
	// Moderation keeps the domain blocks and allows, Reports the Flags
	// other servers send (SPEC §11).
	Moderation ports.ModerationStore
	Reports    ports.ReportStore
	// Blocks keeps the personas' blocks and mutes, and remote actors'
	// blocks of them (SPEC §11 "Personas").
	Blocks ports.BlockStore
	// OAuth keeps the client API's applications, grants and tokens.
	OAuth ports.OAuthStore
	// AccountIDs gives remote actors the client API's account ids.
	AccountIDs ports.AccountIDStore
	Pinger     ports.Pinger
	// Wakes carries enqueue notifications from other processes; nil when
	// the store has none (memory: one process only).
	Wakes ports.WakeSource
	// PurgeEvery is the retention purge period: negative when the store
	// expires finished jobs itself (a Mongo TTL index).
	PurgeEvery time.Duration
	// Schema reports whether the store's migrations are all applied (nil
	// for stores without migrations); /readyz uses it.
	Schema func(ctx context.Context) error
}

// OpenStores connects to the configured store and prepares it in the order
// of SPEC §4: connect (and, on Mongo, touch every collection one at a
// time), run the migrations, ensure the indexes. Only after it returns may
// anything concurrent start. The cleanup closes the connections.
func OpenStores(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	switch cfg.Store {
	case StoreMemory:
		log.Warn("storage is in memory: every account, post and queued delivery is lost when the process exits",
			"store", StoreMemory, "hint", "leave HERALD_STORE unset (sqlite, in HERALD_DATA_DIR), or set it to postgres or mongo, to keep data")
		return openMemory(), func() {}, nil
	case StoreSQLite:
		return openSQLite(ctx, cfg, log)
	case StorePostgres:
		return openPostgres(ctx, cfg, log)
	case StoreMongo:
		return openMongo(ctx, cfg, log)
	}
	return nil, nil, fmt.Errorf("unknown store %q", cfg.Store)
}

func openMemory() *Stores {
	jobs := memory.NewJobStore()
	accounts := memory.NewAccountStore()
	content := memory.NewContentStore()
	return &Stores{
		Jobs: jobs, JobAdmin: jobs,
		Names:      memory.NewNameRegistry(),
		Instances:  memory.NewInstanceStore(),
		Followers:  memory.NewFollowerStore(),
		FanOuts:    memory.NewFanOutStore(),
		Users:      accounts,
		Tokens:     accounts,
		Actors:     accounts,
		Foreign:    content,
		Posts:      content,
		Tombstones: content,
		Moderation: memory.NewModerationStore(),
		Reports:    memory.NewReportStore(),
		Blocks:     memory.NewBlockStore(),
		OAuth:      memory.NewOAuthStore(),
		AccountIDs: memory.NewAccountIDStore(),
		Pinger:     memory.Pinger{},
		PurgeEvery: time.Hour,
	}
}
