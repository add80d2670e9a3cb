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
	t.Run("JobStore", func(t *testing.T) {
		var dbs contract.Opened[string]
		opts := append([]contract.Option{contract.SecondHandle(func(t *testing.T, s contract.Jobs) contract.Jobs {
			name, ok := dbs.Of(s)
			if !ok || second == nil {
				t.Logf("second store: the same client (no second client given)")
				return s
			}
			return mongo.NewJobStore(second.Database(name))
		})}, skip...)
		open := func(t *testing.T) contract.Jobs {
			db := NewDB(t, client)
			return dbs.Add(mongo.NewJobStore(db), db.Name())
		}
		contract.JobStore(t, open, opts...)
		contract.JobStoreReadyHosts(t, open, opts...)
	})
	t.Run("NameRegistry", func(t *testing.T) {
		contract.NameRegistry(t, func(t *testing.T) ports.NameRegistry { return mongo.NewNameRegistry(NewDB(t, client)) }, skip...)
	})
	t.Run("InstanceStore", func(t *testing.T) {
		contract.InstanceStore(t, func(t *testing.T) ports.InstanceStore { return mongo.NewInstanceStore(NewDB(t, client)) }, skip...)
	})
	t.Run("FollowerStore", func(t *testing.T) {
		contract.FollowerStore(t, func(t *testing.T) ports.FollowerStore { return mongo.NewFollowerStore(NewDB(t, client)) }, skip...)
	})
	t.Run("FanOutStore", func(t *testing.T) {
		contract.FanOutStore(t, func(t *testing.T) ports.FanOutStore { return mongo.NewFanOutStore(NewDB(t, client)) }, skip...)
	})
	t.Run("UserStore", func(t *testing.T) {
		contract.UserStore(t, func(t *testing.T) ports.UserStore { return mongo.NewAccountStore(NewDB(t, client)) }, skip...)
	})
	t.Run("TokenStore", func(t *testing.T) {
		contract.TokenStore(t, func(t *testing.T) ports.TokenStore { return mongo.NewAccountStore(NewDB(t, client)) }, skip...)
	})
	t.Run("ActorStore", func(t *testing.T) {
		contract.ActorStore(t, func(t *testing.T) ports.ActorStore { return mongo.NewAccountStore(NewDB(t, client)) }, skip...)
	})
	t.Run("ActorSettings", func(t *testing.T) {
		contract.ActorSettings(t, func(t *testing.T) ports.ActorStore { return mongo.NewAccountStore(NewDB(t, client)) }, skip...)
	})
	t.Run("ForeignActorStore", func(t *testing.T) {
		contract.ForeignActorStore(t, func(t *testing.T) ports.ForeignActorStore { return mongo.NewContentStore(NewDB(t, client)) }, skip...)
	})
	t.Run("PostStore", func(t *testing.T) {
		contract.PostStore(t, func(t *testing.T) ports.PostStore { return mongo.NewContentStore(NewDB(t, client)) }, skip...)
	})
	t.Run("PostExtras", func(t *testing.T) {
		contract.PostExtras(t, func(t *testing.T) ports.PostStore { return mongo.NewContentStore(NewDB(t, client)) }, skip...)
	})
	t.Run("PollStore", func(t *testing.T) {
		contract.PollStore(t, func(t *testing.T) contract.PostsAndPolls { return mongo.NewContentStore(NewDB(t, client)) }, skip...)
	})
	t.Run("TombstoneStore", func(t *testing.T) {
		contract.TombstoneStore(t, func(t *testing.T) ports.TombstoneStore { return mongo.NewContentStore(NewDB(t, client)) }, skip...)
	})
	t.Run("ModerationStore", func(t *testing.T) {
		contract.ModerationStore(t, func(t *testing.T) ports.ModerationStore { return mongo.NewModerationStore(NewDB(t, client)) }, skip...)
	})
	t.Run("ReportStore", func(t *testing.T) {
		contract.ReportStore(t, func(t *testing.T) ports.ReportStore { return mongo.NewReportStore(NewDB(t, client)) }, skip...)
	})
	t.Run("BlockStore", func(t *testing.T) {
		contract.BlockStore(t, func(t *testing.T) ports.BlockStore { return mongo.NewBlockStore(NewDB(t, client)) }, skip...)
	})
	t.Run("OAuthStore", func(t *testing.T) {
		contract.OAuthStore(t, func(t *testing.T) ports.OAuthStore { return mongo.NewOAuthStore(NewDB(t, client)) }, skip...)
	})
	t.Run("AccountIDStore", func(t *testing.T) {
		contract.AccountIDStore(t, func(t *testing.T) ports.AccountIDStore { return mongo.NewAccountIDStore(NewDB(t, client)) }, skip...)
	})
	t.Run("NotificationStore", func(t *testing.T) {
		contract.NotificationStore(t, func(t *testing.T) ports.NotificationStore { return mongo.NewNotificationStore(NewDB(t, client)) }, skip...)
	})
}
