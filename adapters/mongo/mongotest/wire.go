package mongotest

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/event"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// WriteConcernOnTheWire checks, on the commands the driver really sends,
// that lease, fencing and reservation writes carry majority write concern
// whatever the caller's client says (SPEC §9): it connects its own client
// to uri with w:1 and a command monitor.
func WriteConcernOnTheWire(t *testing.T, uri string) {
	var mu sync.Mutex
	sent := make(map[string][]bson.Raw)
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		defer mu.Unlock()
		sent[e.CommandName] = append(sent[e.CommandName], append(bson.Raw(nil), e.Command...))
	}}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := mongodrv.Connect(ctx, options.Client().ApplyURI(uri).SetMonitor(monitor).SetWriteConcern(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) }) // after NewDB's drop, which runs first
	db := NewDB(t, c)
	jobs := mongo.NewJobStore(db)
	j, err := domain.NewJob("j1", "https://local.example/a/1", "https://r.example/inbox", "av1", "https://local.example/users/a#main-key", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	sent = make(map[string][]bson.Raw) // only what the stores send from here
	mu.Unlock()
	if _, err := jobs.Enqueue(Ctx(t), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Lease(Ctx(t), ports.LeaseRequest{Owner: "w", Token: "t", Now: time.Now().Add(time.Second), Until: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if lost, err := jobs.Settle(Ctx(t), []ports.Settlement{{ID: "j1", Token: "t", State: domain.JobSucceeded, Attempts: 1, FinishedAt: time.Now()}}); err != nil || lost[0] != nil {
		t.Fatal(err, lost)
	}
	r, _ := domain.NewReservedName("alice", domain.NameKindPersona, "av1", time.Now())
	if err := mongo.NewNameRegistry(db).Reserve(Ctx(t), r); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, name := range []string{"insert", "findAndModify", "update"} {
		cmds := sent[name]
		if len(cmds) == 0 {
			t.Fatalf("no %s command was sent (sent: %v)", name, keysOf(sent))
		}
		for _, cmd := range cmds {
			w, err := cmd.LookupErr("writeConcern", "w")
			if err != nil || w.StringValue() != "majority" {
				t.Fatalf("%s without majority write concern: %s", name, cmd)
			}
		}
	}
	// The lease is one findAndModify, hinted to jobs_lease.
	if n := len(sent["findAndModify"]); n != 1 {
		t.Fatalf("a lease sent %d findAndModify commands", n)
	}
	if h, err := sent["findAndModify"][0].LookupErr("hint"); err != nil || h.StringValue() != "jobs_lease" {
		t.Fatalf("lease without the jobs_lease hint: %s", sent["findAndModify"][0])
	}
}

func keysOf(m map[string][]bson.Raw) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
