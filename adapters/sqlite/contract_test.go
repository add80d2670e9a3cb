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

func TestJobStore(t *testing.T) {
	t.Parallel()
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
	contract.JobStore(t, newStore, second, kept)
	contract.JobStoreReadyHosts(t, newStore, second)
}

func TestNameRegistry(t *testing.T) {
	t.Parallel()
	contract.NameRegistry(t, func(t *testing.T) ports.NameRegistry {
		p := migrated(t)
		// 001 seeds the system names; the suite wants an empty registry.
		mustExec(t, p, `DELETE FROM reserved_names`)
		return sqlite.NewNameRegistry(p)
	})
}

func TestInstanceStore(t *testing.T) {
	t.Parallel()
	contract.InstanceStore(t, func(t *testing.T) ports.InstanceStore { return sqlite.NewInstanceStore(migrated(t)) })
}

func TestFollowerStore(t *testing.T) {
	t.Parallel()
	contract.FollowerStore(t, func(t *testing.T) ports.FollowerStore { return sqlite.NewFollowerStore(migrated(t)) })
}

func TestFanOutStore(t *testing.T) {
	t.Parallel()
	contract.FanOutStore(t, func(t *testing.T) ports.FanOutStore { return sqlite.NewFanOutStore(migrated(t)) })
}

func TestUserStore(t *testing.T) {
	t.Parallel()
	contract.UserStore(t, func(t *testing.T) ports.UserStore { return sqlite.NewAccountStore(migrated(t)) })
}

func TestTokenStore(t *testing.T) {
	t.Parallel()
	contract.TokenStore(t, func(t *testing.T) ports.TokenStore { return sqlite.NewAccountStore(migrated(t)) })
}

func TestActorStore(t *testing.T) {
	t.Parallel()
	contract.ActorStore(t, func(t *testing.T) ports.ActorStore { return sqlite.NewAccountStore(migrated(t)) })
	contract.ActorSettings(t, func(t *testing.T) ports.ActorStore { return sqlite.NewAccountStore(migrated(t)) })
}

func TestForeignActorStore(t *testing.T) {
	t.Parallel()
	contract.ForeignActorStore(t, func(t *testing.T) ports.ForeignActorStore { return sqlite.NewContentStore(migrated(t)) })
}

func TestPostStore(t *testing.T) {
	t.Parallel()
	contract.PostStore(t, func(t *testing.T) ports.PostStore { return sqlite.NewContentStore(migrated(t)) })
}

func TestPostExtras(t *testing.T) {
	t.Parallel()
	contract.PostExtras(t, func(t *testing.T) ports.PostStore { return sqlite.NewContentStore(migrated(t)) })
}

func TestPollStore(t *testing.T) {
	t.Parallel()
	contract.PollStore(t, func(t *testing.T) contract.PostsAndPolls { return sqlite.NewContentStore(migrated(t)) })
}

func TestTombstoneStore(t *testing.T) {
	t.Parallel()
	contract.TombstoneStore(t, func(t *testing.T) ports.TombstoneStore { return sqlite.NewContentStore(migrated(t)) })
}

func TestModerationStore(t *testing.T) {
	t.Parallel()
	contract.ModerationStore(t, func(t *testing.T) ports.ModerationStore { return sqlite.NewModerationStore(migrated(t)) })
}

func TestReportStore(t *testing.T) {
	t.Parallel()
	contract.ReportStore(t, func(t *testing.T) ports.ReportStore { return sqlite.NewReportStore(migrated(t)) })
}

func TestBlockStore(t *testing.T) {
	t.Parallel()
	contract.BlockStore(t, func(t *testing.T) ports.BlockStore { return sqlite.NewBlockStore(migrated(t)) })
}
