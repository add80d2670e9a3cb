package memory

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

func TestDerivedKey(t *testing.T) {
	const act = "https://herald.example/activities/1"
	for _, tc := range []struct{ inbox, host string }{
		{"https://a.example/users/bob/inbox", "a.example"},
		{"http://127.0.0.1:9000/inbox", "127.0.0.1:9000"},
		{"https://A.example/inbox", "a.example"}, // kept whole
		{"https://a.example", "a.example"},       // no path: kept whole
	} {
		rest, sc := compactInbox(tc.inbox, tc.host)
		got := derivedKey(act, sc, tc.host, rest)
		if want := domain.DedupeKey(act, tc.inbox); hex.EncodeToString(got[:]) != want {
			t.Errorf("%s: derived key %x, domain.DedupeKey %s", tc.inbox, got, want)
		}
		if e := (&entry{inbox: rest, inboxScheme: sc, hq: &hostQueue{host: tc.host}}); e.fullInbox() != tc.inbox {
			t.Errorf("%s: kept as %q (%d), given back as %q", tc.inbox, rest, sc, e.fullInbox())
		}
	}
}

func TestInstant(t *testing.T) {
	now := time.Now()
	for _, tm := range []time.Time{{}, now, now.In(time.FixedZone("x", 3600)), time.Unix(0, 0), time.Unix(-1, 5)} {
		if got := instantOf(tm).time(); !got.Equal(tm) || got.IsZero() != tm.IsZero() {
			t.Errorf("%v came back as %v", tm, got)
		}
	}
	// Beyond what nanoseconds hold: clamped, in order, never the zero time.
	early, late := time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)
	if !(instantOf(time.Time{}) < instantOf(early) && instantOf(early) < instantOf(now) && instantOf(now) < instantOf(late)) {
		t.Error("clamped times out of order")
	}
}

// A key that is not the job's derived one (another job's, as an operator
// or a test may set it) is kept as given and still deduplicates, both
// ways.
func TestGivenDedupeKeys(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id, key string) domain.Job {
		j, err := domain.NewJob(contract.JobID(id), "https://l.example/a/"+id, "https://r.example/inbox", "s", "s#key", []byte(`{}`), base)
		if err != nil {
			t.Fatal(err)
		}
		if key != "" {
			j.DedupeKey = key
		}
		return j
	}
	derived := mk("d", "")
	s := NewJobStore()
	if n, err := s.Enqueue(ctx, []domain.Job{mk("other", derived.DedupeKey)}); n != 1 || err != nil {
		t.Fatal(n, err)
	}
	if !s.jobs[contract.JobID("other")].givenKey {
		t.Fatal("another job's key taken for the derived one")
	}
	if j, _ := s.Get(ctx, contract.JobID("other")); j.DedupeKey != derived.DedupeKey {
		t.Fatalf("key given back as %q", j.DedupeKey)
	}
	if n, _ := s.Enqueue(ctx, []domain.Job{derived}); n != 0 {
		t.Fatal("a derived key already stored as given inserted again")
	}
	s = NewJobStore()
	if n, _ := s.Enqueue(ctx, []domain.Job{derived}); n != 1 || s.jobs[contract.JobID("d")].givenKey {
		t.Fatal("a NewJob key not kept as derived")
	}
	if n, _ := s.Enqueue(ctx, []domain.Job{mk("other", derived.DedupeKey)}); n != 0 {
		t.Fatal("a given key already stored as derived inserted again")
	}
}

// Two derived keys that share the 8 bytes byKey indexes them by: the
// second goes to collided, and both are found, and dropped, exactly.
func TestDedupeKeyCollision(t *testing.T) {
	ctx := context.Background()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(id string) domain.Job {
		j, err := domain.NewJob(contract.JobID(id), "https://l.example/a/"+id, "https://r.example/inbox", "s", "s#key", []byte(`{}`), base)
		if err != nil {
			t.Fatal(err)
		}
		return j
	}
	s := NewJobStore()
	a, b := mk("a"), mk("b")
	if n, _ := s.Enqueue(ctx, []domain.Job{a}); n != 1 {
		t.Fatal("a not stored")
	}
	// Make a hold b's index, as a collision would.
	ka, kb := parseDedupeKey(a.DedupeKey), parseDedupeKey(b.DedupeKey)
	s.byKey[short(&kb.sum)] = s.byKey[short(&ka.sum)]
	if n, _ := s.Enqueue(ctx, []domain.Job{b}); n != 1 {
		t.Fatal("b taken for a duplicate of a")
	}
	if s.collided[kb.sum] != s.jobs[contract.JobID("b")] {
		t.Fatal("b not in collided")
	}
	if n, _ := s.Enqueue(ctx, []domain.Job{mk("b")}); n != 0 {
		t.Fatal("b inserted twice")
	}
	j, err := s.LeaseBatch(ctx, ports.LeaseRequest{Token: "t", Now: base, Until: base.Add(time.Minute), Limit: 2})
	if err != nil || len(j) != 2 {
		t.Fatal(len(j), err)
	}
	for _, j := range j {
		if _, err := s.Settle(ctx, []ports.Settlement{{ID: j.ID, Token: "t", State: domain.JobSucceeded, Attempts: 1, FinishedAt: base}}); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := s.Purge(ctx, base.Add(time.Second)); n != 2 || len(s.collided) != 0 || len(s.jobs) != 0 {
		t.Fatalf("purged %d, left %d collided and %d jobs", n, len(s.collided), len(s.jobs))
	}
	if n, _ := s.Enqueue(ctx, []domain.Job{a, b}); n != 2 {
		t.Fatalf("after the purge, %d of the two jobs went in again", n)
	}
}
