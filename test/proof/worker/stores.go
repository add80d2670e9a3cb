package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/ports"
)

// stores are what the worker's engine runs on.
type stores struct {
	jobs      ports.JobStore
	instances ports.InstanceStore
	actors    ports.ActorStore
	wakes     ports.WakeSource
	close     func()
}

// openPostgres connects to the schema the test prepared; the waker's
// LISTEN is what "ready" waits for.
func openPostgres(ctx context.Context, dbURL string, log *slog.Logger) (stores, error) {
	connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	pool, err := postgres.Connect(connectCtx, dbURL)
	if err != nil {
		return stores{}, err
	}
	return stores{jobs: postgres.NewJobStore(pool), instances: postgres.NewInstanceStore(pool),
		actors: postgres.NewAccountStore(pool), wakes: postgres.NewWaker(pool, log), close: pool.Close}, nil
}

// openSQLite opens the data directory the test migrated, taking its lock
// as `herald serve` does (so a worker restarted after a kill -9 shows the
// lock died with its holder). SQLite has no cross-process wake-up: the
// engine polls, and "ready" is announced at once.
func openSQLite(ctx context.Context, dir string, _ *slog.Logger) (stores, error) {
	db, err := sqlite.Open(ctx, dir)
	if err != nil {
		return stores{}, err
	}
	return stores{jobs: sqlite.NewJobStore(db), instances: sqlite.NewInstanceStore(db),
		actors: sqlite.NewAccountStore(db), wakes: wakeOnce{}, close: func() { _ = db.Close() }}, nil
}

// openMongo connects to the database the test prepared (collections
// touched, migrated, indexes ensured), with the stores and the waker
// bootstrap wires for HERALD_STORE=mongo: the job_signals change stream, or
// on a server without change streams (FerretDB) the counter read every
// mongo.WakePollEvery. Its first wake-up, once it watches, is "ready". With
// only the engine's 5 s poll, the first process to see the test's enqueue
// kept every host slot and the others never leased (the host-cap proof
// failed in CI so): production wakes every process on an enqueue, and so
// does the proof.
func openMongo(ctx context.Context, uri, dbName string, log *slog.Logger) (stores, error) {
	connectCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client, err := mongo.Connect(connectCtx, uri)
	if err != nil {
		return stores{}, err
	}
	db := client.Database(dbName)
	return stores{jobs: mongo.NewJobStore(db), instances: mongo.NewInstanceStore(db),
		actors: mongo.NewAccountStore(db), wakes: mongo.NewWaker(db, system.Clock{}, mongo.WakePollEvery, log),
		close: func() { _ = client.Disconnect(context.Background()) }}, nil
}

// wakeOnce wakes the engine once, at its start, and never again.
type wakeOnce struct{}

func (wakeOnce) Wakeups(context.Context) <-chan struct{} {
	c := make(chan struct{}, 1)
	c <- struct{}{}
	return c
}
