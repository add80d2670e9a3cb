// Package mongotest is the test harness of adapters/mongo, shared by its
// own tests (a real MongoDB: MONGODB_URI or testcontainers) and by the
// embedded-FerretDB module in test/ferret: fresh databases per test, every
// contract suite wired to the Mongo stores, and the migration suite. Like
// test/contract, a case the server at hand cannot prove is skipped by name
// with the reason printed.
package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

var dbSeq atomic.Int64

// Ctx is a test's context: cancelled at cleanup, bounded so a hung server
// fails the test instead of the whole run.
func Ctx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// EmptyDB returns a database of its own for t, dropped when t ends, with
// nothing in it.
func EmptyDB(t *testing.T, client *mongodrv.Client) *mongodrv.Database {
	t.Helper()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := fmt.Sprintf("herald_test_%d_%s", dbSeq.Add(1), hex.EncodeToString(b[:]))
	db := client.Database(name)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := db.Drop(ctx); err != nil {
			t.Logf("drop test database %s: %v", name, err)
		}
	})
	return db
}

// NewDB returns a fresh database prepared as bootstrap prepares one at start
// (collections touched, indexes ensured), for the store contract suites.
func NewDB(t *testing.T, client *mongodrv.Client) *mongodrv.Database {
	t.Helper()
	db := EmptyDB(t, client)
	ctx := Ctx(t)
	if err := mongo.Touch(ctx, db); err != nil {
		t.Fatalf("touch: %v", err)
	}
	ttl, err := mongo.EnsureIndexes(ctx, db, nil)
	if err != nil {
		t.Fatalf("ensure indexes: %v", err)
	}
	if ttl {
		keepFinishedJobs(t, db)
	}
	return db
}

// keepFinishedJobs stretches the TTL of jobs_finished_at to the longest the
// server takes (about 68 years). The contract suites' clock stands at a
// fixed date (months before the wall clock by now), while the server's TTL
// monitor runs on the wall clock: it would delete the suites' finished jobs
// in the middle of a case (seen on FerretDB v2, whose pg_cron TTL runs every
// minute: a long concurrent case lost its succeeded jobs). The TTL itself
// is checked by Indexes (TTLOnFinishedJobsOrPurgeFallback) and Expiry.
func keepFinishedJobs(t *testing.T, db *mongodrv.Database) {
	t.Helper()
	err := db.RunCommand(Ctx(t), bson.D{{Key: "collMod", Value: "jobs"}, {Key: "index", Value: bson.D{
		{Key: "name", Value: "jobs_finished_at"}, {Key: "expireAfterSeconds", Value: int32(math.MaxInt32)}}}}).Err()
	if err != nil {
		t.Fatalf("collMod jobs_finished_at: %v", err)
	}
}

// Contracts runs every contract suite of test/contract against the Mongo
// stores, each case on a fresh database. The job store cases that want a
// second process's store (the per-host cap across two stores, the batch
// concurrency) get one on second, a client of its own (its own connection
// pool, as another process has), on the same database; with a nil second
// they share client. skip names cases (by their subtest name) this server
// cannot prove.
func Contracts(t *testing.T, client, second *mongodrv.Client, skip ...contract.Option) {
	var dbs contract.Opened[string]
	on := func(t *testing.T) *mongodrv.Database { return NewDB(t, client) }
	contract.Every(t, contract.Stores{
		Jobs: func(t *testing.T) contract.Jobs {
			db := on(t)
			return dbs.Add(mongo.NewJobStore(db), db.Name())
		},
		JobOptions: []contract.Option{contract.SecondHandle(func(t *testing.T, s contract.Jobs) contract.Jobs {
			name, ok := dbs.Of(s)
			if !ok || second == nil {
				t.Logf("second store: the same client (no second client given)")
				return s
			}
			return mongo.NewJobStore(second.Database(name))
		})},
		Names:         func(t *testing.T) ports.NameRegistry { return mongo.NewNameRegistry(on(t)) },
		Instances:     func(t *testing.T) ports.InstanceStore { return mongo.NewInstanceStore(on(t)) },
		Followers:     func(t *testing.T) ports.FollowerStore { return mongo.NewFollowerStore(on(t)) },
		FanOuts:       func(t *testing.T) ports.FanOutStore { return mongo.NewFanOutStore(on(t)) },
		Accounts:      func(t *testing.T) contract.Accounts { return mongo.NewAccountStore(on(t)) },
		Content:       func(t *testing.T) contract.Content { return mongo.NewContentStore(on(t)) },
		Moderation:    func(t *testing.T) ports.ModerationStore { return mongo.NewModerationStore(on(t)) },
		Reports:       func(t *testing.T) ports.ReportStore { return mongo.NewReportStore(on(t)) },
		Blocks:        func(t *testing.T) ports.BlockStore { return mongo.NewBlockStore(on(t)) },
		OAuth:         func(t *testing.T) ports.OAuthStore { return mongo.NewOAuthStore(on(t)) },
		AccountIDs:    func(t *testing.T) ports.AccountIDStore { return mongo.NewAccountIDStore(on(t)) },
		Notifications: func(t *testing.T) ports.NotificationStore { return mongo.NewNotificationStore(on(t)) },
	}, skip...)
}
