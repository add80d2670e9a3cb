package engine_test

import (
	"context"
	"testing"

	"github.com/heraldfed/herald/adapters/memory"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/domain"
)

// TestEngineSendsNothingToARefusedDomain: a job leased for a suspended
// domain, or one not allowed in allowlist mode, ends dead with the reason
// and no request; other hosts' jobs go out as ever (SPEC §11).
func TestEngineSendsNothingToARefusedDomain(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		mode   domain.FederationMode
		reason string
	}{{domain.FederationBlocklist, "suspended"}, {domain.FederationAllowlist, "not allowed (allowlist mode)"}} {
		t.Run(string(tt.mode), func(t *testing.T) {
			t.Parallel()
			b := setup(t, engine.Config{}, status(202))
			store := memory.NewModerationStore()
			mod := application.NewModeration(application.ModerationDeps{Store: store, JobAdmin: b.jobs, Foreign: memory.NewContentStore(),
				Followers: memory.NewFollowerStore(), Mode: tt.mode, Clock: b.clock})
			ctx := context.Background()
			switch tt.mode {
			case domain.FederationBlocklist:
				bl, _ := domain.NewDomainBlock("evil.example", domain.SeveritySuspend, "", b.clock.Now())
				if _, err := mod.Block(ctx, bl); err != nil {
					t.Fatal(err)
				}
			case domain.FederationAllowlist:
				a, _ := domain.NewDomainAllow("good.example", b.clock.Now())
				if err := mod.Allow(ctx, a); err != nil {
					t.Fatal(err)
				}
			}
			b.rebuild(engine.Config{}, func(d *engine.Deps) { d.Policy = mod })
			b.start()
			b.enqueue(b.job("bad", "sub.evil.example"), b.job("good", "good.example"))
			j := b.waitState("bad", domain.JobDead)
			b.waitState("good", domain.JobSucceeded)
			if j.LastError != tt.reason || j.Attempts != 0 || j.FinishedAt.IsZero() {
				t.Fatalf("job to a refused host: %+v", j)
			}
			for _, c := range b.deliverer.Calls() {
				if c.Inbox == "https://sub.evil.example/inbox" {
					t.Fatal("a request went to a refused host")
				}
			}
		})
	}
}
