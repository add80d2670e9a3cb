package checked_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/ports/checked"
)

// untouchable fails the test on any call that reaches it: the checks must
// refuse before the store is asked.
type untouchable struct {
	checked.Jobs
	ports.ModerationStore
	ports.ReportStore
	ports.ForeignActorStore
	t *testing.T
}

func (u untouchable) Enqueue(context.Context, []domain.Job) (int, error) {
	u.t.Fatal("Enqueue reached the store")
	return 0, nil
}

func (u untouchable) Settle(context.Context, []ports.Settlement) ([]error, error) {
	u.t.Fatal("Settle reached the store")
	return nil, nil
}

func (u untouchable) List(context.Context, ports.JobFilter) ([]domain.Job, error) {
	u.t.Fatal("List reached the store")
	return nil, nil
}

func (u untouchable) EndDomainJobs(context.Context, string, string, time.Time) (int, error) {
	u.t.Fatal("EndDomainJobs reached the store")
	return 0, nil
}

func (u untouchable) AddDomainAllow(context.Context, domain.DomainAllow) error {
	u.t.Fatal("AddDomainAllow reached the store")
	return nil
}

func (u untouchable) AddReport(context.Context, domain.Report) (bool, error) {
	u.t.Fatal("AddReport reached the store")
	return false, nil
}

func (u untouchable) OnDomain(context.Context, string, string, int) ([]string, error) {
	u.t.Fatal("OnDomain reached the store")
	return nil, nil
}

func TestInvalidInputNeverReachesTheStore(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		call func(u untouchable) error
	}{
		{"a job without a dedupe key", func(u untouchable) error {
			_, err := checked.NewJobs(u).Enqueue(ctx, []domain.Job{{ID: "0190d5c4-5b4e-7000-8000-000000000001", Host: "a.example", State: domain.JobQueued}})
			return err
		}},
		{"a settlement to leased", func(u untouchable) error {
			_, err := checked.NewJobs(u).Settle(ctx, []ports.Settlement{{ID: "0190d5c4-5b4e-7000-8000-000000000001", Token: "t", State: domain.JobLeased}})
			return err
		}},
		{"a page after what is not a job id", func(u untouchable) error {
			_, err := checked.NewJobs(u).List(ctx, ports.JobFilter{AfterID: "j1"})
			return err
		}},
		{"the jobs of a domain not normalized", func(u untouchable) error {
			_, err := checked.NewJobs(u).EndDomainJobs(ctx, "Example.COM", "suspended", now)
			return err
		}},
		{"an allow of an empty domain", func(u untouchable) error {
			return checked.NewModeration(u).AddDomainAllow(ctx, domain.DomainAllow{})
		}},
		{"a report without its Flag", func(u untouchable) error {
			_, err := checked.NewReports(u).AddReport(ctx, domain.Report{ID: "r1"})
			return err
		}},
		{"the actors of a domain not normalized", func(u untouchable) error {
			_, err := checked.NewForeign(u).OnDomain(ctx, "", "", 10)
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := c.call(untouchable{t: t}); !errors.Is(err, domain.ErrInvalidInput) {
				t.Fatalf("err = %v, want domain.ErrInvalidInput", err)
			}
		})
	}
}

func TestWrappingIsOnceAndUndone(t *testing.T) {
	var raw checked.Jobs = untouchable{t: t}
	once := checked.NewJobs(raw)
	if checked.NewJobs(once) != once {
		t.Fatal("a store behind the checks was put behind them again")
	}
	if checked.Unwrap(once) != raw || checked.Unwrap(raw) != raw {
		t.Fatal("Unwrap does not give the store back")
	}
}
