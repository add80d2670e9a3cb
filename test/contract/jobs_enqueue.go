package contract

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// enqueueCases: the job store cases of Enqueue: it stores each job once
// (by dedupe key), refuses an invalid batch whole, and keeps one body per
// payload however many jobs send it; Get reads a job back.
func enqueueCases() []testCase[Jobs] {
	return []testCase[Jobs]{
		{"EnqueueThenGet", func(t *testing.T, s Jobs) {
			j := job(t, "j1", "a.example", base)
			enqueue(t, s, j)
			got := get(t, s, "j1")
			if got.DedupeKey != j.DedupeKey || got.Inbox != j.Inbox || got.Host != "a.example" ||
				got.ActivityID != j.ActivityID || got.SenderID != j.SenderID || got.KeyID != j.KeyID ||
				string(got.Payload) != string(j.Payload) || got.State != domain.JobQueued || got.Attempts != 0 {
				t.Fatalf("stored job differs:\n got %+v\nwant %+v", got, j)
			}
			sameTime(t, got.RunAt, base, "runAt")
			sameTime(t, got.CreatedAt, base, "createdAt")
			if !got.FinishedAt.IsZero() || got.LeaseToken != "" {
				t.Fatalf("new job has lease or finish: %+v", got)
			}
			_, err := s.Get(ctx(t), JobID("nope"))
			mustIs(t, err, domain.ErrNotFound, "get unknown")
		}},
		{"JobIDsAreUUIDs", func(t *testing.T, s Jobs) {
			// Every store takes and gives job ids in one form, so that a
			// store that keeps an id in 16 bytes behaves as one that keeps
			// its text; a string that is not one is invalid where a job is
			// given, and names no job where one is looked up.
			j := job(t, "j1", "a.example", base)
			for _, bad := range []string{"j1", strings.ToUpper(j.ID), "{" + j.ID + "}", strings.ReplaceAll(j.ID, "-", "")} {
				odd := j
				odd.ID = bad
				_, err := s.Enqueue(ctx(t), []domain.Job{odd})
				mustIs(t, err, domain.ErrInvalidInput, "enqueue with id "+bad)
				_, err = s.Get(ctx(t), bad)
				mustIs(t, err, domain.ErrNotFound, "get "+bad)
				n, err := s.RetryDead(ctx(t), bad, "", base)
				if err != nil || n != 0 {
					t.Fatalf("retry dead %s: %d, %v", bad, n, err)
				}
				_, err = s.Settle(ctx(t), []ports.Settlement{{ID: bad, Token: "t", State: domain.JobSucceeded, Attempts: 1, FinishedAt: base}})
				mustIs(t, err, domain.ErrInvalidInput, "settle "+bad)
				_, err = s.List(ctx(t), ports.JobFilter{AfterID: bad})
				mustIs(t, err, domain.ErrInvalidInput, "list after "+bad)
			}
			for _, odd := range []domain.Job{{ID: j.ID}, func() domain.Job { o := j; o.State = "lost"; return o }(), func() domain.Job { o := j; o.Host = ""; return o }()} {
				_, err := s.Enqueue(ctx(t), []domain.Job{odd})
				mustIs(t, err, domain.ErrInvalidInput, fmt.Sprintf("enqueue of %+v", odd))
			}
			enqueue(t, s, j)
			if got := get(t, s, "j1"); got.ID != j.ID {
				t.Fatalf("id %q read back as %q", j.ID, got.ID)
			}
		}},
		{"DedupeIsANoOp", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			again := job(t, "j2", "a.example", base.Add(time.Hour))
			again.DedupeKey = get(t, s, "j1").DedupeKey
			n, err := s.Enqueue(ctx(t), []domain.Job{again})
			mustNil(t, err, "enqueue duplicate")
			if n != 0 {
				t.Fatalf("duplicate dedupe key inserted %d", n)
			}
			if _, err := s.Get(ctx(t), JobID("j2")); err == nil {
				t.Fatal("duplicate was stored")
			}
			sameTime(t, get(t, s, "j1").RunAt, base, "original untouched")
			// A batch holding a known key, a new one and a repeat of the new
			// one: of the two, the first given is kept (b2, the later id, so
			// that a store keeping the lower id or the last given fails).
			b1, b2 := job(t, "b1", "a.example", base), job(t, "b2", "a.example", base)
			b2.DedupeKey = b1.DedupeKey
			n, err = s.Enqueue(ctx(t), []domain.Job{again, b2, b1})
			mustNil(t, err, "mixed batch")
			if n != 1 {
				t.Fatalf("mixed batch inserted %d, want 1", n)
			}
			get(t, s, "b2")
			if _, err := s.Get(ctx(t), JobID("b1")); err == nil {
				t.Fatal("of two jobs with one key in a batch, the second given was stored too or instead")
			}
			c, _ := s.Counts(ctx(t))
			if c[domain.JobQueued] != 2 {
				t.Fatalf("queued = %d, want 2", c[domain.JobQueued])
			}
		}},
		{"EnqueueIDClashInsertsNothing", func(t *testing.T, s Jobs) {
			enqueue(t, s, job(t, "j1", "a.example", base))
			clash := job(t, "j1", "b.example", base) // same id, another delivery
			fresh := job(t, "j2", "c.example", base)
			_, err := s.Enqueue(ctx(t), []domain.Job{fresh, clash})
			mustIs(t, err, domain.ErrAlreadyExists, "id clash")
			if _, err := s.Get(ctx(t), JobID("j2")); err == nil {
				t.Fatal("a batch that failed inserted part of itself")
			}
			if got := get(t, s, "j1"); got.Host != "a.example" {
				t.Fatalf("the clash overwrote the first job: %+v", got)
			}
		}},
		{"EnqueueRefusesAKeyThatIsNotADedupeKey", func(t *testing.T, s Jobs) {
			good := job(t, "j1", "a.example", base)
			bad := job(t, "j2", "b.example", base)
			bad.DedupeKey = "k2" // not domain.DedupeKey's 64 hex digits
			_, err := s.Enqueue(ctx(t), []domain.Job{good, bad})
			mustIs(t, err, domain.ErrInvalidInput, "a key that is not a DedupeKey")
			if _, err := s.Get(ctx(t), JobID("j1")); err == nil {
				t.Fatal("a refused batch stored part of itself")
			}
		}},
		{"EnqueueLargeBatch", func(t *testing.T, s Jobs) {
			jobs := make([]domain.Job, 10_000)
			for i := range jobs {
				jobs[i] = job(t, fmt.Sprintf("j%05d", i), fmt.Sprintf("h%03d.example", i%1000), base)
			}
			enqueue(t, s, jobs...)
			n, err := s.Enqueue(ctx(t), jobs)
			mustNil(t, err, "re-enqueue")
			if n != 0 {
				t.Fatalf("re-enqueue of a whole batch inserted %d", n)
			}
			c, _ := s.Counts(ctx(t))
			if c[domain.JobQueued] != 10_000 {
				t.Fatalf("queued = %d", c[domain.JobQueued])
			}
		}},
		{"BodySharedByManyJobs", func(t *testing.T, s Jobs) {
			// One fan-out: many jobs, one body, enqueued in two batches.
			payload := []byte(`{"id":"https://local.example/activities/fan","type":"Create"}`)
			var jobs []domain.Job
			for i := range 6 {
				j := job(t, fmt.Sprintf("fan-%d", i), fmt.Sprintf("h%d.example", i), base)
				j.Payload = payload
				jobs = append(jobs, j)
			}
			enqueue(t, s, jobs[:3]...)
			enqueue(t, s, jobs[3:]...)
			want := domain.BodyOf(payload)
			for _, j := range jobs {
				got := get(t, s, j.ID)
				if string(got.Payload) != string(payload) || got.BodyID != want {
					t.Fatalf("job %s: body %q payload %q, want body %s", j.ID, got.BodyID, got.Payload, want)
				}
			}
			leased := leaseBatch(t, s, ports.LeaseRequest{Token: "t", Now: base, Limit: 6})
			if len(leased) != 6 {
				t.Fatalf("leased %d of 6", len(leased))
			}
			for _, j := range leased {
				if string(j.Payload) != string(payload) || j.BodyID != want {
					t.Fatalf("leased %s: body %q payload %q", j.ID, j.BodyID, j.Payload)
				}
			}
			listed, err := s.List(ctx(t), ports.JobFilter{})
			mustNil(t, err, "list")
			for _, j := range listed {
				if string(j.Payload) != string(payload) {
					t.Fatalf("listed %s: payload %q", j.ID, j.Payload)
				}
			}
			// A job may refer to the stored body without carrying it.
			ref := job(t, "ref", "ref.example", base)
			ref.Payload, ref.BodyID = nil, want
			enqueue(t, s, ref)
			if got := get(t, s, "ref"); string(got.Payload) != string(payload) {
				t.Fatalf("a job referring to a stored body: payload %q", got.Payload)
			}
		}},
		{"MissingBodyIsAnEmptyPayloadNotAnError", func(t *testing.T, s Jobs) {
			missing := domain.BodyOf([]byte("never stored"))
			j := job(t, "orphan", "o.example", base)
			j.Payload, j.BodyID = nil, missing
			enqueue(t, s, j)
			got := mustLease(t, s, base, "t")
			if JobName(got.ID) != "orphan" || len(got.Payload) != 0 || got.BodyID != missing {
				t.Fatalf("leased %s body %q payload %q", got.ID, got.BodyID, got.Payload)
			}
			if g := get(t, s, "orphan"); len(g.Payload) != 0 || g.BodyID != missing {
				t.Fatalf("get: body %q payload %q", g.BodyID, g.Payload)
			}
		}},
	}
}
