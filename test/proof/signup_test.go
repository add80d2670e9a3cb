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

	"go.mongodb.org/mongo-driver/bson"
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
	d := newDatabase(t, false) // herald migrates it
	signUps(t, []string{"HERALD_STORE=postgres", "DATABASE_URL=" + d.url}, func(name string) map[string]int {
		out := map[string]int{}
		for table, sql := range map[string]string{
			"reserved_names": `SELECT count(*) FROM reserved_names WHERE name = $1`,
			"root_users":     `SELECT count(*) FROM root_users WHERE lower(user_name) = $1`,
			"avatars":        `SELECT count(*) FROM avatars WHERE lower(name) = $1`,
			"tokens":         `SELECT count(*) FROM tokens WHERE user_id IN (SELECT id FROM root_users WHERE lower(user_name) = $1)`,
		} {
			out[table] = d.count(t, sql, name)
		}
		return out
	})
}

// The same proof with HERALD_STORE=mongo (MONGODB_URI; in CI FerretDB v2):
// `herald serve` as real processes on the Mongo store, starting at once on
// an empty database (their migrations under the Mongo lock collection, and
// the instance actor, race), then the 64 sign-ups, arbitrated by the unique
// index on reserved_names.name (E11000, code 11000 on FerretDB).
func TestSixtyFourSignUpsForOneNameAcrossTwoProcessesOnMongo(t *testing.T) {
	requireMongo(t, "the one-username-space guarantee (exactly one of 64 concurrent sign-ups wins) across 2 herald serve processes, and their concurrent start")
	// No t.Parallel: the Mongo proofs run one at a time (store_test.go).
	db := emptyMongoDatabase(t) // herald migrates it
	signUps(t, []string{"HERALD_STORE=mongo", "MONGODB_URI=" + mongoURI(), "HERALD_MONGO_DATABASE=" + db.Name()}, func(name string) map[string]int {
		ctx := testCtx(t)
		exact := bson.D{{Key: "$regex", Value: "^" + name + "$"}, {Key: "$options", Value: "i"}}
		count := func(coll string, filter bson.D) int {
			n, err := db.Collection(coll).CountDocuments(ctx, filter)
			if err != nil {
				t.Fatalf("count %s: %v", coll, err)
			}
			return int(n)
		}
		var user struct {
			ID string `bson:"_id"`
		}
		tokens := 0
		if err := db.Collection("root_users").FindOne(ctx, bson.D{{Key: "userName", Value: exact}}).Decode(&user); err == nil {
			tokens = count("tokens", bson.D{{Key: "userId", Value: user.ID}})
		}
		return map[string]int{
			"reserved_names": count("reserved_names", bson.D{{Key: "name", Value: name}}),
			"root_users":     count("root_users", bson.D{{Key: "userName", Value: exact}}),
			"avatars":        count("avatars", bson.D{{Key: "name", Value: exact}}),
			"tokens":         tokens,
		}
	})
}

// signUps is the sign-up proof on two herald serve processes started with
// storeEnv; rows counts, per table or collection, what the store holds for
// the name.
func signUps(t *testing.T, storeEnv []string, rows func(name string) map[string]int) {
	const perProc, name = 32, "proofname"
	spellings := []string{"proofname", "ProofName", "PROOFNAME"}
	env := append(storeEnv, []string{
		"HERALD_ADDR=127.0.0.1:0",
		"HERALD_BCRYPT_COST=4", "HERALD_LOG_FORMAT=json", "HERALD_DOMAIN=proof.localhost",
		// Every request comes from 127.0.0.1: lift the per-IP sign-up
		// rate limit, which would answer most of them 429 before the
		// name is even looked at.
		"HERALD_AUTH_RATE_PER_MINUTE=10000", "HERALD_AUTH_BURST=1000",
	}...)
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
	for table, n := range rows(name) {
		if n != 1 {
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
