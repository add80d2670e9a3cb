package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/system"
)

// mongoKind is MongoDB at MONGODB_URI (majority writes and primary reads
// are the adapter's own collection options). Before migrating, every
// collection is touched one at a time, so nothing concurrent creates one
// (SPEC §4). When the server has no TTL index (FerretDB answers
// NotImplemented) the engine's purge loop takes over.
type mongoKind struct{}

func (mongoKind) check(cfg Config) error {
	if cfg.MongoURI == "" {
		return fmt.Errorf("HERALD_STORE=%s needs MONGODB_URI", StoreMongo)
	}
	return nil
}

func (mongoKind) open(ctx context.Context, cfg Config, log *slog.Logger, owner bool) (store, error) {
	client, err := mongo.Connect(ctx, string(cfg.MongoURI))
	if err != nil {
		return nil, err
	}
	log = log.With("database", cfg.MongoDatabase)
	if owner {
		log.Info("connected")
	}
	return &mongoStore{ctx: ctx, client: client, name: cfg.MongoDatabase, db: client.Database(cfg.MongoDatabase), log: log}, nil
}

func (mongoKind) backup(context.Context, Config, string) (BackupResult, error) {
	return BackupResult{}, errors.New("herald backup copies the sqlite store; for MongoDB use mongodump (see docs/operations.md)")
}

type mongoStore struct {
	ctx    context.Context // the open's: Disconnect runs without its cancel
	client *mongodrv.Client
	name   string
	db     *mongodrv.Database
	log    *slog.Logger
	// ttl: migrateUp found (or made) the TTL index on jobs.finishedAt,
	// which expires finished jobs in the engine's stead.
	ttl bool
}

func (s *mongoStore) close() { _ = s.client.Disconnect(context.WithoutCancel(s.ctx)) }

func (s *mongoStore) migrateUp(ctx context.Context, log *slog.Logger) error {
	if err := mongo.Touch(ctx, s.db); err != nil {
		return fmt.Errorf("touch collections: %w", err)
	}
	if err := mongo.MigrateUp(ctx, s.client, s.name, log); err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	ttl, err := mongo.EnsureIndexes(ctx, s.db, log)
	if err != nil {
		return fmt.Errorf("indexes: %w", err)
	}
	s.ttl = ttl
	log.Info("indexes ready", "ttl_index", ttl)
	return nil
}

func (s *mongoStore) migrateDown(ctx context.Context, steps int, log *slog.Logger) error {
	return mongo.MigrateDown(ctx, s.client, s.name, steps, log)
}

func (s *mongoStore) version(ctx context.Context) (uint, bool, error) {
	return mongo.MigrationVersion(ctx, s.client, s.name)
}

func (*mongoStore) latest() (uint, error) { return mongo.LatestMigration() }

func (s *mongoStore) ports() *Stores {
	db := s.db
	purge := time.Hour
	if s.ttl {
		purge = -1 // the TTL index on jobs.finishedAt expires them
	}
	return withFamilies(&Stores{
		Names:      mongo.NewNameRegistry(db),
		Instances:  mongo.NewInstanceStore(db),
		Followers:  mongo.NewFollowerStore(db),
		FanOuts:    mongo.NewFanOutStore(db),
		Moderation: mongo.NewModerationStore(db),
		Reports:    mongo.NewReportStore(db),
		Blocks:     mongo.NewBlockStore(db),
		OAuth:      mongo.NewOAuthStore(db),
		AccountIDs: mongo.NewAccountIDStore(db),
		Pinger:     mongo.NewPinger(s.client),
		PurgeEvery: purge,
		// Enqueues in other processes wake this one: a change stream where
		// the server has them, the enqueue signal read every second where
		// it has none (logged once).
		Wakes: mongo.NewWaker(db, system.Clock{}, mongo.WakePollEvery, s.log),

		// The client API's notifications (issue 34).
		Notifications: mongo.NewNotificationStore(db),
	}, mongo.NewJobStore(db), mongo.NewAccountStore(db), mongo.NewContentStore(db))
}
