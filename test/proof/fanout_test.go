package proof_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// fanOutFollowers is the size of the kill -9 fan-out (issue 15's goal).
const fanOutFollowers = 100_000

// kill -9 of a herald serve process in the middle of a fan-out of one post
// to 100,000 followers with personal inboxes, then a restart: the new
// process claims the fan-out once the dead one's lease (30 s) has expired,
// continues after its recorded cursor, and every follower inbox ends with
// exactly one job (the pages enqueued but not yet recorded at the kill,
// two at most, are deduplicated). Deliveries are held: every inbox is on one loopback
// server that never answers (one worker, one per host), so the queue the
// fan-out builds stays put and the counts are the fan-out's alone.
func TestKillNineMidFanOutThenRestartQueuesEveryInboxOnce(t *testing.T) {
	requirePG(t, "resuming a kill -9'd fan-out of 100,000 followers on PostgreSQL with exactly one job per inbox")
	t.Parallel()
	d := newDatabase(t, true)

	// The inboxes' server: accepts and holds every request until the test
	// ends (the engine's timeout ends each).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-done:
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { close(done); _ = srv.Close() })
	inboxBase := "http://" + ln.Addr().String()

	env := []string{
		"HERALD_STORE=postgres", "DATABASE_URL=" + d.url, "HERALD_ADDR=127.0.0.1:0",
		"HERALD_BCRYPT_COST=4", "HERALD_LOG_FORMAT=json", "HERALD_DOMAIN=proof.localhost",
		"HERALD_WORKERS=1", "HERALD_PER_HOST=1", "HERALD_ALLOW_PRIVATE_TARGETS=true",
	}
	first := startProc(t, "herald1", heraldBin, env, "serve")
	addr := listening(t, first)
	token := signUp(t, addr, "fanner")
	actor := "http://proof.localhost/users/fanner"

	ctx := testCtx(t)
	if _, err := d.pool.Exec(ctx, `
INSERT INTO foreign_avatars (actor_uri, public_key_id, inbox, host, fetched_at)
SELECT $1 || '/users/f' || lpad(i::text, 6, '0'), $1 || '/users/f' || lpad(i::text, 6, '0') || '#main-key',
       $1 || '/users/f' || lpad(i::text, 6, '0') || '/inbox', $2, now()
FROM generate_series(1, $3::int) i`, inboxBase, ln.Addr().String(), fanOutFollowers); err != nil {
		t.Fatal(err)
	}
	if _, err := d.pool.Exec(ctx, `
INSERT INTO followers (follower_uri, followed_uri, state, activity_id, created_at, updated_at)
SELECT actor_uri, $1, 'accepted', actor_uri || '#follow', now(), now() FROM foreign_avatars`, actor); err != nil {
		t.Fatal(err)
	}

	// Publish; the request dies with the process.
	posted := make(chan error, 1)
	go func() {
		body, _ := json.Marshal(map[string]string{"as": "fanner", "content": "to a hundred thousand", "visibility": "public"})
		req, _ := http.NewRequest(http.MethodPost, addr+"/api/v1/posts", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := (&http.Client{Timeout: 5 * time.Minute}).Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			err = fmt.Errorf("publish answered %d before the kill: %s", resp.StatusCode, b)
		}
		posted <- err
	}()
	// Kill once a tenth of the inboxes are queued, preferably (for up to
	// 5 s more) at the worst moment: a page enqueued whose record is not
	// yet written (more jobs than the record counts).
	var recordedAtKill int
	killed, queuedAtKill := progressing(func() int { return d.count(t, `SELECT count(*) FROM jobs`) },
		func(queued int) bool { return queued >= fanOutFollowers/10 })
	if !killed {
		t.Fatalf("only %d jobs queued, none in the last %s", queuedAtKill, stall)
	}
	midPage := eventually(5*time.Second, func() bool {
		return d.count(t, `SELECT (SELECT count(*) FROM jobs) - COALESCE((SELECT queued FROM fan_outs), 0)`) > 0
	})
	first.kill9(t)
	killedAt := time.Now()
	time.Sleep(300 * time.Millisecond) // a statement the server was still running
	queuedAtKill = d.count(t, `SELECT count(*) FROM jobs`)
	recordedAtKill = d.count(t, `SELECT queued FROM fan_outs`)
	if queuedAtKill >= fanOutFollowers {
		t.Fatalf("the fan-out had finished (%d jobs) before the kill: nothing was proven", queuedAtKill)
	}
	if err := <-posted; err == nil {
		t.Fatal("publish returned no error although its process was killed")
	}
	if n := d.count(t, `SELECT count(*) FROM fan_outs WHERE NOT done`); n != 1 {
		t.Fatalf("%d unfinished fan-outs after the kill, want 1", n)
	}

	second := startProc(t, "herald2", heraldBin, env, "serve")
	listening(t, second)
	if ok, jobs := progressing(func() int { return d.count(t, `SELECT count(*) FROM jobs`) },
		func(int) bool { return d.count(t, `SELECT count(*) FROM fan_outs WHERE done`) == 1 }); !ok {
		t.Fatalf("the fan-out was not finished after the restart: %d jobs, none queued in the last %s", jobs, stall)
	}
	finishedAfter := time.Since(killedAt)

	jobs := d.count(t, `SELECT count(*) FROM jobs`)
	// A job keeps its inbox as a path under its host where it can
	// (migration 017); herald_inbox gives the whole URL back.
	distinctInboxes := d.count(t, `SELECT count(DISTINCT herald_inbox(inbox_ref, host)) FROM jobs`)
	missing := d.count(t, `SELECT count(*) FROM foreign_avatars fa WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE herald_inbox(j.inbox_ref, j.host) = fa.inbox)`)
	recorded := d.count(t, `SELECT queued FROM fan_outs`)
	if jobs != fanOutFollowers || distinctInboxes != fanOutFollowers || missing != 0 {
		t.Fatalf("after the restart: %d jobs, %d distinct inboxes, %d follower inboxes without a job; want %d, %d, 0",
			jobs, distinctInboxes, missing, fanOutFollowers, fanOutFollowers)
	}
	// The record counts the jobs of the pages it recorded. The pages in the
	// store but not in the record at the kill (two at most: one page's
	// enqueue runs beside the next's) come back as already queued when
	// the resumer enqueues them again, so the record misses exactly them;
	// the operator page counts the jobs themselves (CountsOfBody).
	if want := fanOutFollowers - (queuedAtKill - recordedAtKill); recorded != want || queuedAtKill-recordedAtKill > 2*1000 {
		t.Errorf("the fan-out record counts %d queued, want %d (%d followers, %d jobs in the store and %d in the record at the kill: at most two pages apart)",
			recorded, want, fanOutFollowers, queuedAtKill, recordedAtKill)
	}
	if len(second.Logs("fan-out resumed")) != 1 {
		t.Errorf("herald2 logged %d resumptions, want 1", len(second.Logs("fan-out resumed")))
	}
	t.Logf("%d followers: killed with %d jobs queued (%d recorded in the fan-out's record; killed between a page's enqueue and its record: %v); "+
		"after the restart %d jobs, one per inbox, %d inboxes without a job; finished %s after the kill (the dead run's 30 s lease, then the resumer)",
		fanOutFollowers, queuedAtKill, recordedAtKill, midPage && queuedAtKill > recordedAtKill, jobs, missing, finishedAfter.Round(time.Second))
}

// listening waits for the process's HTTP server and returns its base URL.
func listening(t *testing.T, p *proc) string {
	t.Helper()
	p.waitFor(t, "herald listening", time.Minute, func() bool { return len(p.Logs("herald listening")) > 0 })
	addr, _ := p.Logs("herald listening")[0]["addr"].(string)
	return "http://" + addr
}

// signUp creates an account (and its persona) and returns its token.
func signUp(t *testing.T, base, name string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": name, "password": "correct horse battery"})
	resp, err := http.Post(base+"/api/v1/accounts", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusCreated || out.Token == "" {
		t.Fatalf("sign up: %d %v", resp.StatusCode, err)
	}
	return out.Token
}
