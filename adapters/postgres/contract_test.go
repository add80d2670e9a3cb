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

// The suite again with every batch tried by COPY first (Enqueue does so
// from 64 jobs up, which few of the suite's batches reach): a batch with a
// stored key or id falls back to the INSERT, and the store behaves the
// same either way.
func TestJobStoreByCopy(t *testing.T) {
	t.Parallel()
	open, opts := jobStores(func(p *pgxpool.Pool) *postgres.JobStore { return postgres.WithCopyMin(postgres.NewJobStore(p), 1) })
	contract.JobStore(t, open, opts...)
	contract.JobStoreReadyHosts(t, open, opts...)
}

// jobStores opens job stores of newStore for the job store's suites, and
// gives them a second handle (another process) and the check of the kept
// counts.
func jobStores(newStore func(*pgxpool.Pool) *postgres.JobStore) (func(t *testing.T) contract.Jobs, []contract.Option) {
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
	return open, []contract.Option{second, kept}
}

func TestContract(t *testing.T) {
	t.Parallel()
	jobs, jobOpts := jobStores(postgres.NewJobStore)
	contract.Every(t, contract.Stores{
		Jobs:       jobs,
		JobOptions: jobOpts,
		Names: func(t *testing.T) ports.NameRegistry {
			p := migrated(t)
			// 001 seeds the system names; the suite wants an empty registry.
			mustExec(t, p, `DELETE FROM reserved_names`)
			return postgres.NewNameRegistry(p)
		},
		Instances:     func(t *testing.T) ports.InstanceStore { return postgres.NewInstanceStore(migrated(t)) },
		Followers:     func(t *testing.T) ports.FollowerStore { return postgres.NewFollowerStore(migrated(t)) },
		FanOuts:       func(t *testing.T) ports.FanOutStore { return postgres.NewFanOutStore(migrated(t)) },
		Accounts:      func(t *testing.T) contract.Accounts { return postgres.NewAccountStore(migrated(t)) },
		Content:       func(t *testing.T) contract.Content { return postgres.NewContentStore(migrated(t)) },
		Moderation:    func(t *testing.T) ports.ModerationStore { return postgres.NewModerationStore(migrated(t)) },
		Reports:       func(t *testing.T) ports.ReportStore { return postgres.NewReportStore(migrated(t)) },
		Blocks:        func(t *testing.T) ports.BlockStore { return postgres.NewBlockStore(migrated(t)) },
		OAuth:         func(t *testing.T) ports.OAuthStore { return postgres.NewOAuthStore(migrated(t)) },
		AccountIDs:    func(t *testing.T) ports.AccountIDStore { return postgres.NewAccountIDStore(migrated(t)) },
		Notifications: func(t *testing.T) ports.NotificationStore { return postgres.NewNotificationStore(migrated(t)) },
		Parallel:      true,
	})
}
