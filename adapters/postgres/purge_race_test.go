package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// The enqueue and the purge of jobs sharing an activity and a body lock
// them in one order (bodies, then activities) and wait for each other, so
// neither deletes what the other is adding a job to. Each side is played
// here by a transaction holding the other's locks, the store runs the
// other side, and the test checks it waited and kept the rows.

// A purge of a body's last job waits for an enqueue that holds the body
// and its activity, and then sees that enqueue's job: both rows stay.
// enqueueSQL holds them FOR UPDATE, enqueueByCopy FOR KEY SHARE.
func TestPurgeWaitsForAnEnqueueOfItsBody(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"FOR UPDATE", "FOR KEY SHARE"} {
		t.Run(lock, func(t *testing.T) {
			t.Parallel()
			purgeWaitsForAnEnqueue(t, lock)
		})
	}
}

func purgeWaitsForAnEnqueue(t *testing.T, lock string) {
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.NewJobStore(p)
	now := time.Now().UTC()
	old := finishedJob(t, s, "old", now.Add(-time.Hour))
	var act int64
	if err := p.QueryRow(ctx, `SELECT activity FROM jobs WHERE id = $1`, contract.JobID("old")).Scan(&act); err != nil {
		t.Fatal(err)
	}
	// The enqueue: its body and activity locked, as bodySQL and
	// enqueueSQL lock them, and a new job of the same activity inserted,
	// not yet committed.
	tx := begin(t, p)
	mustExecTx(t, tx, `SELECT 1 FROM bodies WHERE id = $1 `+lock, old.BodyID)
	mustExecTx(t, tx, `SELECT 1 FROM job_activities WHERE id = $1 `+lock, act)
	key, _ := postgres.DedupeColumns(domain.Job{ActivityID: old.ActivityID, Inbox: "https://b.example/inbox",
		DedupeKey: domain.DedupeKey(old.ActivityID, "https://b.example/inbox")})
	insertJobRow(t, tx, jobRow{id: contract.JobID("new"), key: key, activity: act, inboxRef: "https://b.example/inbox", host: "b.example", state: "queued", at: now})
	if err := behind(t, p, tx, func() error { _, err := s.Purge(ctx, now); return err }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, contract.JobID("new"))
	if err != nil || got.ActivityID != old.ActivityID || got.BodyID != old.BodyID || string(got.Payload) != string(old.Payload) {
		t.Fatalf("the enqueued job after the purge: %+v (%v); its activity or body went with the purged job", got, err)
	}
	if _, err := s.Get(ctx, contract.JobID("old")); err == nil {
		t.Fatal("the finished job was not purged")
	}
}

// An enqueue referring to a body a purge holds (about to delete it) waits
// for the purge, then stores the body afresh: the job has its body. By
// INSERT and by COPY.
func TestEnqueueWaitsForAPurgeOfItsBody(t *testing.T) {
	t.Parallel()
	for name, copyMin := range map[string]int{"insert": 1 << 20, "copy": 1} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			enqueueWaitsForAPurge(t, copyMin)
		})
	}
}

func enqueueWaitsForAPurge(t *testing.T, copyMin int) {
	p := migrated(t)
	ctx := testCtx(t)
	s := postgres.WithCopyMin(postgres.NewJobStore(p), copyMin)
	now := time.Now().UTC()
	old := finishedJob(t, s, "old", now.Add(-time.Hour))
	// The purge: the last job gone, its body locked and deleted, not yet
	// committed.
	tx := begin(t, p)
	mustExecTx(t, tx, `DELETE FROM jobs WHERE id = $1`, old.ID)
	mustExecTx(t, tx, `SELECT 1 FROM bodies WHERE id = $1 FOR UPDATE`, old.BodyID)
	mustExecTx(t, tx, `DELETE FROM job_activities`)
	mustExecTx(t, tx, `DELETE FROM bodies WHERE id = $1`, old.BodyID)
	j, err := domain.NewJob(contract.JobID("new"), old.ActivityID, "https://b.example/inbox", old.SenderID, old.KeyID, old.Payload, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := behind(t, p, tx, func() error { _, err := s.Enqueue(ctx, []domain.Job{j}); return err }); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, contract.JobID("new"))
	if err != nil || got.ActivityID != old.ActivityID || string(got.Payload) != string(old.Payload) {
		t.Fatalf("the job enqueued during the purge: %+v (%v); want its activity and body", got, err)
	}
}

// Two pages of one fan-out are copied at once: an enqueue by COPY does not
// wait for another that holds the same body and activity (FOR KEY SHARE)
// and has not committed. Both pages' jobs are kept.
func TestCopyEnqueuesOfOneFanOutDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	s := postgres.WithCopyMin(postgres.NewJobStore(p), 1)
	now := time.Now().UTC()
	page := func(prefix string) []domain.Job {
		var jobs []domain.Job
		for i := range 100 {
			j, err := domain.NewJob(contract.JobID(fmt.Sprintf("%s%03d", prefix, i)), "https://local.example/act/1",
				fmt.Sprintf("https://h%d.example/users/%s%d/inbox", i%7, prefix, i), "actor-1", "https://local.example/users/alice#main-key",
				[]byte(`{"type":"Create"}`), now)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		return jobs
	}
	if n, err := s.Enqueue(testCtx(t), page("a")); err != nil || n != 100 {
		t.Fatalf("first page: %d %v", n, err)
	}
	var act int64
	var body string
	if err := p.QueryRow(testCtx(t), `SELECT a.id, a.body_id FROM job_activities a`).Scan(&act, &body); err != nil {
		t.Fatal(err)
	}
	// The other page's transaction, between its locks and its commit.
	tx := begin(t, p)
	mustExecTx(t, tx, `SELECT 1 FROM bodies WHERE id = $1 FOR KEY SHARE`, body)
	mustExecTx(t, tx, `SELECT 1 FROM job_activities WHERE id = $1 FOR KEY SHARE`, act)
	// A wait would end at this deadline with an error, not hang the suite.
	ctx, cancel := context.WithTimeout(testCtx(t), 30*time.Second)
	defer cancel()
	if n, err := s.Enqueue(ctx, page("b")); err != nil || n != 100 {
		t.Fatalf("a page copied beside an open one: %d inserted, %v; want 100 without waiting", n, err)
	}
	if err := tx.Commit(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n := count(t, p, `SELECT count(*) FROM jobs WHERE activity = $1`, act); n != 200 {
		t.Fatalf("%d jobs of the fan-out, want 200", n)
	}
}

// finishedJob enqueues a job, leases it and settles it as succeeded at at.
func finishedJob(t *testing.T, s *postgres.JobStore, id string, at time.Time) domain.Job {
	t.Helper()
	ctx := testCtx(t)
	j := newJob(t, id, "a.example", at)
	if _, err := s.Enqueue(ctx, []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	leased, err := s.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: "t-" + id, Now: at, Until: at.Add(time.Minute), Limit: 1})
	if err != nil || len(leased) != 1 {
		t.Fatalf("lease %s: %v %v", id, leased, err)
	}
	if err := settleOne(ctx, s, ports.Settlement{ID: contract.JobID(id), Token: "t-" + id, State: domain.JobSucceeded, Attempts: 1, FinishedAt: at}); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, contract.JobID(id))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func begin(t *testing.T, p *pgxpool.Pool) pgx.Tx {
	t.Helper()
	tx, err := p.Begin(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	return tx
}

func mustExecTx(t *testing.T, tx pgx.Tx, sql string, args ...any) {
	t.Helper()
	if _, err := tx.Exec(testCtx(t), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// behind runs call beside tx, an open transaction playing the other side
// of a race: once call's statement waits for tx (a row or key lock tx
// holds), it commits tx, and returns what call returned. It fails the test
// if call ends before it waits: the race was not played.
func behind(t *testing.T, p *pgxpool.Pool, tx pgx.Tx, call func() error) error {
	t.Helper()
	var xid string
	if err := tx.QueryRow(testCtx(t), `SELECT pg_current_xact_id()::text`).Scan(&xid); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- call() }()
	deadline := time.Now().Add(30 * time.Second)
	for count(t, p, `SELECT count(*) FROM pg_locks WHERE locktype = 'transactionid' AND NOT granted AND transactionid::text = $1`, xid) == 0 {
		select {
		case err := <-done:
			t.Fatalf("ended without waiting for the other transaction (%v)", err)
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("nothing waited for the other transaction in 30 s")
		}
	}
	if err := tx.Commit(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	return <-done
}

// bodySQL, meeting a body stored already, writes no new version of it
// and still holds its row lock until commit: the lock Purge waits for.
func TestBodySQLLocksAStoredBodyWithoutWritingIt(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	body := []byte(`{"id":"https://l.example/a/1"}`)
	id := domain.BodyOf(body)
	if _, err := p.Exec(ctx, postgres.BodySQL, []string{id}, [][]byte{body}); err != nil {
		t.Fatal(err)
	}
	var before string
	if err := p.QueryRow(ctx, `SELECT ctid::text FROM bodies WHERE id = $1`, id).Scan(&before); err != nil {
		t.Fatal(err)
	}
	tx := begin(t, p)
	mustExecTx(t, tx, postgres.BodySQL, []string{id}, [][]byte{body})
	_, err := p.Exec(ctx, `SELECT 1 FROM bodies WHERE id = $1 FOR UPDATE NOWAIT`, id)
	if code := pgCode(err); code != "55P03" {
		t.Fatalf("locking the body beside the enqueue: %v, want lock_not_available (55P03)", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	var after string
	if err := p.QueryRow(ctx, `SELECT ctid::text FROM bodies WHERE id = $1`, id).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Fatalf("the stored body was written again (ctid %s -> %s)", before, after)
	}
}

func pgCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}
