package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/heraldfed/herald/adapters/sqlite"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// Every case of every suite runs on a database file of its own (in the
// test's temporary directory), migrated and indexed as bootstrap does it.

// jobStores opens job stores for the job store's suites, and gives them a
// second handle (an operator's command beside the server) and the check of
// the kept counts.
func jobStores() (func(t *testing.T) contract.Jobs, []contract.Option) {
	var dbs contract.Opened[*sqlite.DB]
	newStore := func(t *testing.T) contract.Jobs {
		db := migrated(t)
		return dbs.Add(sqlite.NewJobStore(db), db)
	}
	second := contract.SecondHandle(func(t *testing.T, s contract.Jobs) contract.Jobs {
		// A handle of its own on the same file, as an operator's command
		// opens it beside the server (sqlite.OpenShared): its own writer
		// connection, so the two are ordered by SQLite's file lock, as two
		// processes' would be. (A second server process is refused by the
		// directory's lock, so this is the one second writer there can be.)
		db, _ := dbs.Of(s)
		other, err := sqlite.OpenShared(testCtx(t), filepath.Dir(db.Path()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = other.Close() })
		return sqlite.NewJobStore(other)
	})
	kept := contract.KeptCounts(func(t *testing.T, s contract.Jobs, after string, _ bool) {
		db, _ := dbs.Of(s)
		mustNoCountDrift(t, db, after)
	})
	return newStore, []contract.Option{second, kept}
}

func TestContract(t *testing.T) {
	t.Parallel()
	jobs, jobOpts := jobStores()
	contract.Every(t, contract.Stores{
		Jobs:       jobs,
		JobOptions: jobOpts,
		Names: func(t *testing.T) ports.NameRegistry {
			db := migrated(t)
			// 001 seeds the system names; the suite wants an empty registry.
			mustExec(t, db, `DELETE FROM reserved_names`)
			return sqlite.NewNameRegistry(db)
		},
		Instances:     func(t *testing.T) ports.InstanceStore { return sqlite.NewInstanceStore(migrated(t)) },
		Followers:     func(t *testing.T) ports.FollowerStore { return sqlite.NewFollowerStore(migrated(t)) },
		FanOuts:       func(t *testing.T) ports.FanOutStore { return sqlite.NewFanOutStore(migrated(t)) },
		Accounts:      func(t *testing.T) contract.Accounts { return sqlite.NewAccountStore(migrated(t)) },
		Content:       func(t *testing.T) contract.Content { return sqlite.NewContentStore(migrated(t)) },
		Moderation:    func(t *testing.T) ports.ModerationStore { return sqlite.NewModerationStore(migrated(t)) },
		Reports:       func(t *testing.T) ports.ReportStore { return sqlite.NewReportStore(migrated(t)) },
		Blocks:        func(t *testing.T) ports.BlockStore { return sqlite.NewBlockStore(migrated(t)) },
		OAuth:         func(t *testing.T) ports.OAuthStore { return sqlite.NewOAuthStore(migrated(t)) },
		AccountIDs:    func(t *testing.T) ports.AccountIDStore { return sqlite.NewAccountIDStore(migrated(t)) },
		Notifications: func(t *testing.T) ports.NotificationStore { return sqlite.NewNotificationStore(migrated(t)) },
		Parallel:      true,
	})
}
