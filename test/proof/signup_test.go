package proof_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// 64 concurrent sign-ups for one name, 32 on each of 2 herald serve
// processes on one PostgreSQL schema: exactly one gets 201, the other 63 get
// 409, and the store holds one reservation, one account, one persona and one
// token for the name. The requests spell the name in three cases, since the
// username space is case-folded. Both processes start at once on an empty
// schema, so their concurrent migrations and instance actor creation are
// part of the proof.
func TestSixtyFourSignUpsForOneNameAcrossTwoProcesses(t *testing.T) {
	requirePG(t, "the one-username-space guarantee (exactly one of 64 concurrent sign-ups wins) across 2 herald processes on PostgreSQL")
	t.Parallel()
	const perProc, name = 32, "proofname"
	spellings := []string{"proofname", "ProofName", "PROOFNAME"}
	d := newDatabase(t, false) // herald migrates it
	env := []string{
		"HERALD_STORE=postgres", "DATABASE_URL=" + d.url, "HERALD_ADDR=127.0.0.1:0",
		"HERALD_BCRYPT_COST=4", "HERALD_LOG_FORMAT=json", "HERALD_DOMAIN=proof.localhost",
		// Every request comes from 127.0.0.1: lift the per-IP sign-up
		// rate limit, which would answer most of them 429 before the
		// name is even looked at.
		"HERALD_AUTH_RATE_PER_MINUTE=10000", "HERALD_AUTH_BURST=1000",
	}
	var servers []*proc
	for i := range 2 {
		servers = append(servers, startProc(t, fmt.Sprintf("herald%d", i+1), heraldBin, env, "serve"))
	}
	var addrs []string
	for _, p := range servers {
		p.waitFor(t, "herald listening", time.Minute, func() bool { return len(p.Logs("herald listening")) > 0 })
		addr, _ := p.Logs("herald listening")[0]["addr"].(string)
		addrs = append(addrs, "http://"+addr)
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxConnsPerHost: perProc, MaxIdleConnsPerHost: perProc}}
	for _, a := range addrs {
		resp, err := client.Get(a + "/readyz")
		if err != nil {
			t.Fatalf("readyz: %v", err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s/readyz: %d", a, resp.StatusCode)
		}
	}

	type result struct {
		server, status int
		body           string
	}
	results := make(chan result, 2*perProc)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 2 * perProc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]string{"username": spellings[i%len(spellings)], "password": "correct horse battery"})
			req, _ := http.NewRequest(http.MethodPost, addrs[i%2]+"/api/v1/accounts", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			<-start
			resp, err := client.Do(req)
			if err != nil {
				results <- result{server: i % 2, body: err.Error()}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			results <- result{server: i % 2, status: resp.StatusCode, body: string(b)}
		}()
	}
	began := time.Now()
	close(start)
	wg.Wait()
	took := time.Since(began)
	close(results)

	statuses := map[int]int{}
	var winner result
	for r := range results {
		statuses[r.status]++
		switch r.status {
		case http.StatusCreated:
			winner = r
		case http.StatusConflict:
		default:
			t.Errorf("server %d answered %d: %s", r.server+1, r.status, r.body)
		}
	}
	if statuses[http.StatusCreated] != 1 || statuses[http.StatusConflict] != 2*perProc-1 {
		t.Errorf("statuses %v, want exactly one 201 and %d × 409", statuses, 2*perProc-1)
	}
	for table, sql := range map[string]string{
		"reserved_names": `SELECT count(*) FROM reserved_names WHERE name = $1`,
		"root_users":     `SELECT count(*) FROM root_users WHERE lower(user_name) = $1`,
		"avatars":        `SELECT count(*) FROM avatars WHERE lower(name) = $1`,
		"tokens":         `SELECT count(*) FROM tokens WHERE user_id IN (SELECT id FROM root_users WHERE lower(user_name) = $1)`,
	} {
		if n := d.count(t, sql, name); n != 1 {
			t.Errorf("%s: %d rows for %q, want 1", table, n, name)
		}
	}
	// The account works on either process: the one that did not create it
	// reads it from the shared store.
	if winner.status == http.StatusCreated {
		other := addrs[1-winner.server]
		body, _ := json.Marshal(map[string]string{"username": name, "password": "correct horse battery"})
		resp, err := client.Post(other+"/api/v1/sessions", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Errorf("login on the other process: %d", resp.StatusCode)
		}
	}
	for _, p := range servers {
		p.stop(t)
	}
	t.Logf("64 sign-ups for %q over 2 processes in %s: %v (201 from herald%d)", name, took.Round(time.Millisecond), statuses, winner.server+1)
}
