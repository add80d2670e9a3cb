package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// Every case of every suite runs on a schema of its own, migrated and
// indexed as bootstrap does it.

func TestJobStore(t *testing.T) {
	t.Parallel()
	jobStoreContract(t, postgres.NewJobStore)
}

// The suite again with every batch tried by COPY first (Enqueue does so
// from 64 jobs up, which few of the suite's batches reach): a batch with a
// stored key or id falls back to the INSERT, and the store behaves the
// same either way.
func TestJobStoreByCopy(t *testing.T) {
	t.Parallel()
	jobStoreContract(t, func(p *pgxpool.Pool) *postgres.JobStore { return postgres.WithCopyMin(postgres.NewJobStore(p), 1) })
}

func jobStoreContract(t *testing.T, newStore func(*pgxpool.Pool) *postgres.JobStore) {
	var pools contract.Opened[*pgxpool.Pool]
	open := func(t *testing.T) contract.Jobs {
		p := migrated(t)
		return pools.Add(newStore(p), p)
	}
	second := contract.SecondHandle(func(t *testing.T, s contract.Jobs) contract.Jobs {
		// A pool of its own on the same schema: another process.
		p, _ := pools.Of(s)
		other, err := pgxpool.NewWithConfig(testCtx(t), p.Config())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(other.Close)
		return newStore(other)
	})
	kept := contract.KeptCounts(func(t *testing.T, s contract.Jobs, after string, reaped bool) {
		p, _ := pools.Of(s)
		mustNoCountDrift(t, p, after)
		if reaped {
			mustFoldedCounts(t, p, after)
		}
	})
	contract.JobStore(t, open, second, kept)
	contract.JobStoreReadyHosts(t, open, second)
}

func TestNameRegistry(t *testing.T) {
	t.Parallel()
	contract.NameRegistry(t, func(t *testing.T) ports.NameRegistry {
		p := migrated(t)
		// 001 seeds the system names; the suite wants an empty registry.
		mustExec(t, p, `DELETE FROM reserved_names`)
		return postgres.NewNameRegistry(p)
	})
}

func TestInstanceStore(t *testing.T) {
	t.Parallel()
	contract.InstanceStore(t, func(t *testing.T) ports.InstanceStore { return postgres.NewInstanceStore(migrated(t)) })
}

func TestFollowerStore(t *testing.T) {
	t.Parallel()
	contract.FollowerStore(t, func(t *testing.T) ports.FollowerStore { return postgres.NewFollowerStore(migrated(t)) })
}

func TestFanOutStore(t *testing.T) {
	t.Parallel()
	contract.FanOutStore(t, func(t *testing.T) ports.FanOutStore { return postgres.NewFanOutStore(migrated(t)) })
}

func TestUserStore(t *testing.T) {
	t.Parallel()
	contract.UserStore(t, func(t *testing.T) ports.UserStore { return postgres.NewAccountStore(migrated(t)) })
}

func TestTokenStore(t *testing.T) {
	t.Parallel()
	contract.TokenStore(t, func(t *testing.T) ports.TokenStore { return postgres.NewAccountStore(migrated(t)) })
}

func TestActorStore(t *testing.T) {
	t.Parallel()
	contract.ActorStore(t, func(t *testing.T) ports.ActorStore { return postgres.NewAccountStore(migrated(t)) })
	contract.ActorSettings(t, func(t *testing.T) ports.ActorStore { return postgres.NewAccountStore(migrated(t)) })
}

func TestForeignActorStore(t *testing.T) {
	t.Parallel()
	contract.ForeignActorStore(t, func(t *testing.T) ports.ForeignActorStore { return postgres.NewContentStore(migrated(t)) })
}

func TestPostStore(t *testing.T) {
	t.Parallel()
	contract.PostStore(t, func(t *testing.T) ports.PostStore { return postgres.NewContentStore(migrated(t)) })
}

func TestPostExtras(t *testing.T) {
	t.Parallel()
	contract.PostExtras(t, func(t *testing.T) ports.PostStore { return postgres.NewContentStore(migrated(t)) })
}

func TestPollStore(t *testing.T) {
	t.Parallel()
	contract.PollStore(t, func(t *testing.T) contract.PostsAndPolls { return postgres.NewContentStore(migrated(t)) })
}

func TestTombstoneStore(t *testing.T) {
	t.Parallel()
	contract.TombstoneStore(t, func(t *testing.T) ports.TombstoneStore { return postgres.NewContentStore(migrated(t)) })
}

func TestModerationStore(t *testing.T) {
	t.Parallel()
	contract.ModerationStore(t, func(t *testing.T) ports.ModerationStore { return postgres.NewModerationStore(migrated(t)) })
}

func TestReportStore(t *testing.T) {
	t.Parallel()
	contract.ReportStore(t, func(t *testing.T) ports.ReportStore { return postgres.NewReportStore(migrated(t)) })
}

func TestBlockStore(t *testing.T) {
	t.Parallel()
	contract.BlockStore(t, func(t *testing.T) ports.BlockStore { return postgres.NewBlockStore(migrated(t)) })
}
