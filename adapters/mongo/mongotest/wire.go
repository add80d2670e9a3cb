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
	"github.com/heraldfed/herald/test/contract"
)

// WriteConcernOnTheWire checks, on the commands the driver really sends,
// that lease, fencing and reservation writes carry majority write concern
// whatever the caller's client says (SPEC §9): it connects its own client
// to uri with w:1 and a command monitor.
func WriteConcernOnTheWire(t *testing.T, uri string) {
	var mu sync.Mutex
	sending := make(map[string][]bson.Raw)
	monitor := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		mu.Lock()
		defer mu.Unlock()
		sending[e.CommandName] = append(sending[e.CommandName], append(bson.Raw(nil), e.Command...))
	}}
	// took returns the commands sent since its last call, by name.
	took := func() map[string][]bson.Raw {
		mu.Lock()
		defer mu.Unlock()
		out := sending
		sending = make(map[string][]bson.Raw)
		return out
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := mongodrv.Connect(ctx, options.Client().ApplyURI(uri).SetMonitor(monitor).SetWriteConcern(nil))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) }) // after NewDB's drop, which runs first
	db := NewDB(t, c)
	jobs := mongo.NewJobStore(db)
	j, err := domain.NewJob(contract.JobID("j1"), "https://local.example/a/1", "https://r.example/inbox", "av1", "https://local.example/users/a#main-key", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	took() // only what the stores send from here
	if _, err := jobs.Enqueue(Ctx(t), []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	if got, err := jobs.LeaseBatch(Ctx(t), ports.LeaseRequest{Owner: "w", Token: "t", Now: time.Now().Add(time.Second), Until: time.Now().Add(time.Hour), Limit: 1}); err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	if lost, err := jobs.Settle(Ctx(t), []ports.Settlement{{ID: j.ID, Token: "t", State: domain.JobSucceeded, Attempts: 1, FinishedAt: time.Now()}}); err != nil || lost[0] != nil {
		t.Fatal(err, lost)
	}
	r, _ := domain.NewReservedName("alice", domain.NameKindPersona, "av1", time.Now())
	if err := mongo.NewNameRegistry(db).Reserve(Ctx(t), r); err != nil {
		t.Fatal(err)
	}
	sent := took()
	for _, name := range []string{"insert", "update"} {
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
	// An uncapped lease reads its candidates with one find, hinted to
	// jobs_lease.
	var hinted bool
	for _, cmd := range sent["find"] {
		if coll, _ := cmd.Lookup("find").StringValueOK(); coll != "jobs" {
			continue
		}
		if h, err := cmd.LookupErr("hint"); err == nil && h.StringValue() == "jobs_lease" {
			hinted = true
		}
	}
	if !hinted {
		t.Fatalf("no find of the jobs hinted to jobs_lease: the lease's candidates (finds: %v)", sent["find"])
	}
	// A capped lease reads each ready host's jobs with a find hinted to
	// jobs_queued_host (or its stand-in, where a server has no partial
	// indexes), in one batch.
	j2, err := domain.NewJob(contract.JobID("j2"), "https://local.example/a/2", "https://r.example/inbox", "av1", "https://local.example/users/a#main-key", []byte(`{}`), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Enqueue(Ctx(t), []domain.Job{j2}); err != nil {
		t.Fatal(err)
	}
	took()
	got, err := jobs.LeaseBatch(Ctx(t), ports.LeaseRequest{Owner: "w", Token: "t2", Now: time.Now().Add(time.Second), Until: time.Now().Add(time.Hour), Limit: 1, PerHost: 2})
	sent = took()
	if err != nil || len(got) != 1 {
		t.Fatal(got, err)
	}
	var hostFinds int
	for _, cmd := range sent["find"] {
		if _, err := cmd.LookupErr("filter", "host"); err != nil {
			continue
		}
		hostFinds++
		h, _ := cmd.Lookup("hint").StringValueOK()
		single, _ := cmd.Lookup("singleBatch").BooleanOK()
		if (h != "jobs_queued_host" && h != "jobs_host_state") || !single {
			t.Fatalf("a capped lease read a host's jobs with hint %q, singleBatch %v: %s", h, single, cmd)
		}
	}
	if hostFinds == 0 {
		t.Fatalf("a capped lease sent no find of a host's jobs (finds: %v)", sent["find"])
	}
}

func keysOf(m map[string][]bson.Raw) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TransactionWatch is a command monitor that notes every command belonging
// to a multi-document transaction (one carrying autocommit or
// startTransaction, or a commit or abort). The adapter must not need one:
// MongoDB-compatible servers without transactions (FerretDB v2 on
// DocumentDB) apply the writes of a failed "transaction" instead of rolling
// them back, so an operation that relied on one would silently half-apply.
// A test connects its client with Monitor and fails if Seen is not empty.
type TransactionWatch struct {
	mu       sync.Mutex
	commands int
	seen     []string
}

// Monitor returns the monitor to connect a client with.
func (w *TransactionWatch) Monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		_, autocommit := e.Command.Lookup("autocommit").BooleanOK()
		_, start := e.Command.Lookup("startTransaction").BooleanOK()
		w.mu.Lock()
		defer w.mu.Unlock()
		w.commands++
		if autocommit || start || e.CommandName == "commitTransaction" || e.CommandName == "abortTransaction" {
			w.seen = append(w.seen, e.CommandName+" on "+e.DatabaseName)
		}
	}}
}

// Commands is how many commands the watch saw, to show it watched at all.
func (w *TransactionWatch) Commands() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.commands
}

// Seen lists the commands sent inside a transaction.
func (w *TransactionWatch) Seen() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}
