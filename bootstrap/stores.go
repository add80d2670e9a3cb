package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
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
	// Polls keeps the votes and counts of the posts' polls (the content
	// store's, beside Posts).
	Polls ports.PollStore
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

	// Notifications keeps what the personas are told of (the client
	// API's notifications, issue 34).
	Notifications ports.NotificationStore
}

// withFamilies fills s's ports that one store's job, account and content
// stores each implement several of, so each store's file lists the rest,
// and puts the checks of ports/checked in front of the stores that have
// them (every store's, here, so no store's file can leave them out).
func withFamilies(s *Stores, jobs interface {
	ports.JobStore
	ports.JobAdmin
}, accounts interface {
	ports.UserStore
	ports.TokenStore
	ports.ActorStore
}, content interface {
	ports.ForeignActorStore
	ports.PostStore
	ports.PollStore
	ports.TombstoneStore
}) *Stores {
	checkedJobs := checked.NewJobs(jobs)
	s.Jobs, s.JobAdmin = checkedJobs, checkedJobs
	s.Users, s.Tokens, s.Actors = checked.NewUsers(accounts), accounts, accounts
	// The checks hide the content store's other ports: its polls are
	// named beside Posts (application.New would look for them behind it).
	s.Foreign, s.Posts, s.Polls, s.Tombstones = checked.NewForeign(content), checked.NewPosts(content), content, checked.NewTombstones(content)
	s.Moderation, s.Reports = checked.NewModeration(s.Moderation), checked.NewReports(s.Reports)
	s.Blocks, s.OAuth, s.AccountIDs = checked.NewBlocks(s.Blocks), checked.NewOAuth(s.OAuth), checked.NewAccountIDs(s.AccountIDs)
	s.Notifications = checked.NewNotifications(s.Notifications)
	return s
}

// storeKind is one technology HERALD_STORE names, in a file of its own
// (stores_*.go); storeKinds maps the names to them, so nothing else in
// bootstrap tells the stores apart.
type storeKind interface {
	// check says what the configuration lacks for this store.
	check(cfg Config) error
	// open connects to the store. owner: this process owns the data (a
	// server, a migration) and may create it and take its lock; otherwise
	// it opens it beside a server that may be running (a maintenance
	// command), never creating it.
	open(ctx context.Context, cfg Config, log *slog.Logger, owner bool) (store, error)
	// backup copies the store's data into dest, or says which tool does.
	backup(ctx context.Context, cfg Config, dest string) (BackupResult, error)
}

var storeKinds = map[string]storeKind{
	StoreMemory:   memoryKind{},
	StoreSQLite:   sqliteKind{},
	StorePostgres: postgresKind{},
	StoreMongo:    mongoKind{},
}

func kindOf(cfg Config) (storeKind, error) {
	if k, ok := storeKinds[cfg.Store]; ok {
		return k, nil
	}
	return nil, fmt.Errorf("HERALD_STORE=%q: want sqlite, memory, mongo or postgres", cfg.Store)
}

// store is an open store.
type store interface {
	// ports are every port over it (once its schema is ready).
	ports() *Stores
	close()
}

// migrator is a store with a schema: every one but memory.
type migrator interface {
	// migrateUp prepares the schema in the order of SPEC §4: migrate
	// (under the store's migration lock), then ensure the indexes.
	migrateUp(ctx context.Context, log *slog.Logger) error
	migrateDown(ctx context.Context, steps int, log *slog.Logger) error
	// version is the applied migration, latest the one this build embeds.
	version(ctx context.Context) (v uint, dirty bool, err error)
	latest() (uint, error)
}

// openStore opens the configured store; log is storeLog's.
func openStore(ctx context.Context, cfg Config, log *slog.Logger, owner bool) (store, error) {
	k, err := kindOf(cfg)
	if err != nil {
		return nil, err
	}
	return k.open(ctx, cfg, log, owner)
}

// storeLog is log (none: a discarding one) with the store's name.
func storeLog(cfg Config, log *slog.Logger) *slog.Logger {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return log.With("store", cfg.Store)
}

// OpenStores connects to the configured store and prepares it in the order
// of SPEC §4: connect (and, on Mongo, touch every collection one at a
// time), run the migrations, ensure the indexes. Only after it returns may
// anything concurrent start. The cleanup closes the connections.
func OpenStores(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	log = storeLog(cfg, log)
	st, err := openStore(ctx, cfg, log, true)
	if err != nil {
		return nil, nil, err
	}
	m, ok := st.(migrator)
	if !ok {
		return st.ports(), st.close, nil
	}
	if err := m.migrateUp(ctx, log); err != nil {
		st.close()
		return nil, nil, err
	}
	latest, err := m.latest()
	if err != nil {
		st.close()
		return nil, nil, err
	}
	log.Info("schema ready", "version", latest)
	s := st.ports()
	s.Schema = func(ctx context.Context) error {
		v, dirty, err := m.version(ctx)
		return schemaState(v, dirty, latest, err)
	}
	return s, st.close, nil
}

// schemaState turns a migration version into a readiness error.
func schemaState(v uint, dirty bool, latest uint, err error) error {
	switch {
	case err != nil:
		return fmt.Errorf("schema version: %w", err)
	case dirty:
		return fmt.Errorf("schema version %d is dirty: a migration failed half way", v)
	case v < latest:
		return fmt.Errorf("schema at version %d, this build needs %d", v, latest)
	}
	return nil
}
