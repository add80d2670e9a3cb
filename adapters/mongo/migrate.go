package mongo

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/golang-migrate/migrate/v4"
	"github.com/golang-migrate/migrate/v4/database"
	"github.com/golang-migrate/migrate/v4/database/mongodb"
	"github.com/golang-migrate/migrate/v4/source"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/domain"
	mongomigrations "github.com/heraldfed/herald/migrations/mongo"
)

// golang-migrate's bookkeeping collections.
const (
	// MigrationsCollection holds the one {version, dirty} document.
	MigrationsCollection = "schema_migrations"
	// LockCollection holds the advisory lock: one document while a process
	// migrates, made unique by an index on locking_key.
	LockCollection = "migrate_advisory_lock"
)

// lockWait is how long a process waits for another one's migrations before
// giving up (less if ctx ends sooner). Migration 001 on a large legacy
// database can take a while; a process that gives up fails its start and
// is restarted by its supervisor.
const lockWait = 5 * time.Minute

// moveDeliveriesVersion is the schema version from which the legacy
// deliveries are moved into jobs in Go (see migrations/mongo).
const moveDeliveriesVersion = 4

// migrator is one golang-migrate instance over the shared client.
//
// It is never Closed: golang-migrate's mongodb driver disconnects the
// client in Close, and the client belongs to the caller. Only the source
// is closed.
type migrator struct {
	m   *migrate.Migrate
	drv database.Driver
	src source.Driver
	db  *mongodrv.Database
	log *slog.Logger
}

func newMigrator(ctx context.Context, client *mongodrv.Client, dbName string, log *slog.Logger) (*migrator, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if dbName == "" {
		return nil, fmt.Errorf("%w: no database name for migrations", domain.ErrInvalidInput)
	}
	wait := lockWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, max(time.Until(dl), time.Second))
	}
	src, err := iofs.New(mongomigrations.FS, ".")
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	db := client.Database(dbName)
	// WithInstance takes the lock once itself (to create the version
	// collection), so a held lock can already fail it.
	drv, err := mongodb.WithInstance(client, &mongodb.Config{
		DatabaseName:         dbName,
		MigrationsCollection: MigrationsCollection,
		Locking: mongodb.Locking{
			CollectionName: LockCollection,
			Enabled:        true,
			Timeout:        int(math.Ceil(wait.Seconds())),
			Interval:       2,
		},
	})
	if err != nil {
		_ = src.Close()
		return nil, fmt.Errorf("migrations: %w", lockError(ctx, db, err))
	}
	m, err := migrate.NewWithInstance("iofs", src, "mongodb", drv)
	if err != nil {
		_ = src.Close()
		return nil, fmt.Errorf("migrations: %w", err)
	}
	m.Log = migrateLog{log}
	// golang-migrate's own lock timeout must outlast the driver's, or it
	// would give up while the driver's attempt goes on and later takes a
	// lock nobody releases.
	m.LockTimeout = wait + 30*time.Second
	return &migrator{m: m, drv: drv, src: src, db: db, log: log}, nil
}

func (mg *migrator) close() { _ = mg.src.Close() }

// stopOn asks golang-migrate to stop between migrations once ctx is done
// (it takes no context of its own).
func (mg *migrator) stopOn(ctx context.Context) (stop func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			select {
			case mg.m.GracefulStop <- true:
			default:
			}
		case <-done:
		}
	}()
	return func() { close(done) }
}

// version reads the current version; 0 means none applied.
func (mg *migrator) version() (uint, bool, error) {
	v, dirty, err := mg.m.Version()
	if errors.Is(err, migrate.ErrNilVersion) {
		return 0, false, nil
	}
	return v, dirty, err
}

// locked runs fn while holding golang-migrate's advisory lock, with the
// version read under it.
func (mg *migrator) locked(ctx context.Context, fn func(version int, dirty bool) error) error {
	if err := mg.drv.Lock(); err != nil {
		return lockError(ctx, mg.db, err)
	}
	v, dirty, err := mg.drv.Version()
	if err == nil {
		err = fn(v, dirty)
	}
	if uerr := mg.drv.Unlock(); uerr != nil && err == nil {
		err = fmt.Errorf("release migration lock: %w", uerr)
	}
	return err
}

// MigrateUp applies every migration not yet applied, under golang-migrate's
// advisory lock (the lock collection's unique index lets one process in;
// the others wait up to 5 minutes, or until ctx ends), then — still under
// the lock, and on every start — moves any pending legacy deliveries into
// jobs (migration 004's Go part, idempotent; see migrations/mongo) and
// makes a key id unique where it is not yet (006's, ownKeyIDs).
//
// A migration that failed halfway leaves the version dirty; MigrateUp then
// refuses to run and says how to recover.
func MigrateUp(ctx context.Context, client *mongodrv.Client, dbName string, log *slog.Logger) error {
	mg, err := newMigrator(ctx, client, dbName, log)
	if err != nil {
		return err
	}
	defer mg.close()
	defer mg.stopOn(ctx)()
	if err := mg.m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return mg.explain("migrate up", err)
	}
	return mg.locked(ctx, func(v int, dirty bool) error {
		if dirty || v < moveDeliveriesVersion {
			return nil // a concurrent MigrateDown; the next start moves them
		}
		n, err := moveDeliveries(ctx, mg.db, mg.log)
		if err != nil {
			return fmt.Errorf("migration 004 (move legacy deliveries): %w", err)
		}
		if n.moved+n.duplicates+n.unmovable > 0 {
			mg.log.Info("mongo: moved legacy deliveries into jobs", slog.Int("moved", n.moved),
				slog.Int("already_queued", n.duplicates), slog.Int("unmovable", n.unmovable))
		}
		if v < keyOwnersVersion {
			return nil
		}
		forged, dups, err := ownKeyIDs(ctx, mg.db)
		if err != nil {
			return fmt.Errorf("migration 006 (one owner per key id): %w", err)
		}
		if forged+dups > 0 {
			mg.log.Info("mongo: deleted cached actors claiming a key id they do not own", slog.Int("other_hosts_key", forged),
				slog.Int("older_copies", dups))
		}
		return nil
	})
}

// MigrateDown undoes the last steps migrations, one at a time, each under
// the lock. Leaving version 4 first runs 004's Go down step (queued moved
// jobs back to their legacy rows), leaving 5 005's (restoreBodies) and
// leaving 6 006's (disownKeyIDs); see migrations/mongo for what each down
// step can and cannot restore. If it is interrupted, run it again before
// starting the old application.
func MigrateDown(ctx context.Context, client *mongodrv.Client, dbName string, steps int, log *slog.Logger) error {
	if steps < 1 {
		return fmt.Errorf("%w: migrate down needs at least one step, got %d", domain.ErrInvalidInput, steps)
	}
	mg, err := newMigrator(ctx, client, dbName, log)
	if err != nil {
		return err
	}
	defer mg.close()
	defer mg.stopOn(ctx)()
	for i := 0; i < steps; i++ {
		v, dirty, err := mg.version()
		if err != nil {
			return mg.explain("migrate down", err)
		}
		if dirty {
			return mg.explain("migrate down", migrate.ErrDirty{Version: int(v)})
		}
		if v == 0 {
			return nil
		}
		if v == keyOwnersVersion {
			err := mg.locked(ctx, func(cur int, dirty bool) error {
				if cur != keyOwnersVersion || dirty {
					return nil
				}
				return disownKeyIDs(ctx, mg.db)
			})
			if err != nil {
				return fmt.Errorf("migration 006 down: %w", err)
			}
		}
		if v == bodiesVersion {
			err := mg.locked(ctx, func(cur int, dirty bool) error {
				if cur != bodiesVersion || dirty {
					return nil
				}
				n, err := restoreBodies(ctx, mg.db)
				if err == nil {
					mg.log.Info("mongo: put each job's body back into its payload", slog.Int("jobs", n))
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("migration 005 down: %w", err)
			}
		}
		if v == moveDeliveriesVersion {
			err := mg.locked(ctx, func(cur int, dirty bool) error {
				if cur != moveDeliveriesVersion || dirty {
					return nil
				}
				n, err := unmoveDeliveries(ctx, mg.db)
				if err == nil {
					mg.log.Info("mongo: gave queued jobs back to legacy deliveries", slog.Int("returned", n))
				}
				return err
			})
			if err != nil {
				return fmt.Errorf("migration 004 down: %w", err)
			}
		}
		if err := mg.m.Steps(-1); err != nil && !errors.Is(err, migrate.ErrNoChange) {
			return mg.explain("migrate down", err)
		}
	}
	return nil
}

// MigrationVersion reads the applied version and whether the last migration
// failed halfway (dirty), without taking the lock; 0 means none applied.
func MigrationVersion(ctx context.Context, client *mongodrv.Client, dbName string) (uint, bool, error) {
	var v struct {
		Version int  `bson:"version"`
		Dirty   bool `bson:"dirty"`
	}
	err := client.Database(dbName).Collection(MigrationsCollection).FindOne(ctx, bson.D{}).Decode(&v)
	if errors.Is(err, mongodrv.ErrNoDocuments) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("migration version: %w", interpretError(err, nil))
	}
	if v.Version < 0 {
		return 0, v.Dirty, nil
	}
	return uint(v.Version), v.Dirty, nil
}

// LatestMigration is the highest version among the embedded migrations:
// the version a database reaches after MigrateUp (for /readyz).
func LatestMigration() (uint, error) {
	entries, err := fs.ReadDir(mongomigrations.FS, ".")
	if err != nil {
		return 0, fmt.Errorf("migrations: %w", err)
	}
	var latest uint
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		if !ok {
			continue
		}
		if v, err := strconv.ParseUint(num, 10, 32); err == nil && uint(v) > latest {
			latest = uint(v)
		}
	}
	if latest == 0 {
		return 0, errors.New("migrations: none embedded")
	}
	return latest, nil
}

// explain adds what an operator needs to the errors golang-migrate returns.
func (mg *migrator) explain(what string, err error) error {
	var dirty migrate.ErrDirty
	if errors.As(err, &dirty) {
		return fmt.Errorf("%s: migration %d failed halfway (the version is dirty). Every Herald Mongo migration can be run again: "+
			"find the cause in the log, then set the document in %s to {version: <the version before it>, dirty: false} and restart: %w",
			what, dirty.Version, MigrationsCollection, err)
	}
	return fmt.Errorf("%s: %w", what, lockError(context.Background(), mg.db, interpretError(err, nil)))
}

// lockError names the holder of the advisory lock when err is a lock
// timeout, so an operator can tell a slow migration from a crashed one.
func lockError(ctx context.Context, db *mongodrv.Database, err error) error {
	if !errors.Is(err, database.ErrLocked) && !errors.Is(err, migrate.ErrLockTimeout) {
		return err
	}
	var holder struct {
		Pid       int       `bson:"pid"`
		Hostname  string    `bson:"hostname"`
		CreatedAt time.Time `bson:"created_at"`
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if e := db.Collection(LockCollection).FindOne(ctx, bson.D{{Key: "locking_key", Value: 0}}).Decode(&holder); e != nil {
		return fmt.Errorf("%w: another process holds the migration lock (%s)", err, LockCollection)
	}
	return fmt.Errorf("%w: the migration lock is held by pid %d on %s since %s; if that process is gone, delete the document in %s and restart",
		err, holder.Pid, holder.Hostname, holder.CreatedAt.UTC().Format(time.RFC3339), LockCollection)
}

// migrateLog sends golang-migrate's messages to slog.
type migrateLog struct{ log *slog.Logger }

func (l migrateLog) Printf(format string, v ...any) {
	l.log.Info("migrate: " + strings.TrimSpace(fmt.Sprintf(format, v...)))
}

func (l migrateLog) Verbose() bool { return false }
