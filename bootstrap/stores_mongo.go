package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/system"
)

// openMongo follows SPEC §4 on MongoDB: connect (majority writes and
// primary reads are the adapter's own collection options), touch every
// collection one at a time before anything concurrent runs, migrate under
// golang-migrate's lock, ensure indexes. When the server has no TTL index
// (FerretDB answers NotImplemented) the engine's purge loop takes over.
func openMongo(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	client, err := mongo.Connect(ctx, string(cfg.MongoURI))
	if err != nil {
		return nil, nil, err
	}
	log = log.With("store", StoreMongo, "database", cfg.MongoDatabase)
	closeClient := func() { _ = client.Disconnect(context.WithoutCancel(ctx)) }
	db := client.Database(cfg.MongoDatabase)
	log.Info("connected")
	if err := mongo.Touch(ctx, db); err != nil {
		closeClient()
		return nil, nil, fmt.Errorf("touch collections: %w", err)
	}
	if err := mongo.MigrateUp(ctx, client, cfg.MongoDatabase, log); err != nil {
		closeClient()
		return nil, nil, fmt.Errorf("migrations: %w", err)
	}
	ttl, err := mongo.EnsureIndexes(ctx, db, log)
	if err != nil {
		closeClient()
		return nil, nil, fmt.Errorf("indexes: %w", err)
	}
	latest, err := mongo.LatestMigration()
	if err != nil {
		closeClient()
		return nil, nil, err
	}
	purge := time.Hour
	if ttl {
		purge = -1 // the TTL index on jobs.finishedAt expires them
	}
	log.Info("schema ready", "version", latest, "ttl_index", ttl)
	jobs := mongo.NewJobStore(db)
	accounts := mongo.NewAccountStore(db)
	content := mongo.NewContentStore(db)
	return &Stores{
		Jobs: jobs, JobAdmin: jobs,
		Names:      mongo.NewNameRegistry(db),
		Instances:  mongo.NewInstanceStore(db),
		Followers:  mongo.NewFollowerStore(db),
		FanOuts:    mongo.NewFanOutStore(db),
		Users:      accounts,
		Tokens:     accounts,
		Actors:     accounts,
		Foreign:    content,
		Posts:      content,
		Tombstones: content,
		Moderation: mongo.NewModerationStore(db),
		Reports:    mongo.NewReportStore(db),
		Blocks:     mongo.NewBlockStore(db),
		OAuth:      mongo.NewOAuthStore(db),
		AccountIDs: mongo.NewAccountIDStore(db),
		Pinger:     mongo.NewPinger(client),
		PurgeEvery: purge,
		// Enqueues in other processes wake this one: a change stream where
		// the server has them, the enqueue signal read every second where
		// it has none (logged once).
		Wakes: mongo.NewWaker(db, system.Clock{}, mongo.WakePollEvery, log),
		Schema: func(ctx context.Context) error {
			v, dirty, err := mongo.MigrationVersion(ctx, client, cfg.MongoDatabase)
			return schemaState(v, dirty, latest, err)
		},
	}, closeClient, nil
}
