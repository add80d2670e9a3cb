package mongo_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcmongo "github.com/testcontainers/testcontainers-go/modules/mongodb"
	"go.mongodb.org/mongo-driver/event"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/mongo/mongotest"
	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
	"github.com/heraldfed/herald/test/contract"
)

// The server these tests run against, chosen once by TestMain in the order
// DEVELOPERS.md gives: MONGODB_URI, else a MongoDB container if a Docker
// engine answers, else none (the tests that need one skip, saying what
// stays unverified; the embedded FerretDB run is the test/ferret module).
var (
	server     *mongodrv.Client
	serverURI  string
	serverName string
	serverErr  error // MONGODB_URI was set but did not answer: a failure, not a skip
	// serverUnverified is what this server cannot prove, printed at the end.
	serverUnverified []string
	noServer         string // why there is no server
	// txns watches every command the tests' client sends: none may belong
	// to a multi-document transaction (checked after the run, in TestMain).
	txns mongotest.TransactionWatch
)

const unverified = "no MongoDB server here: %s. The embedded FerretDB run lives in test/ferret " +
	"(cd test/ferret && go test -race ./...); until MONGODB_URI or a Docker engine is available, these stay unverified " +
	"on real MongoDB: atomic leasing and reservations under concurrency, concurrent breaker updates and follows, the " +
	"TTL index, migration 001 ($merge, $group $first), concurrent MigrateUp, and the lease query plan (explain)"

func TestMain(m *testing.M) {
	cleanup := chooseServer()
	code := m.Run()
	if server != nil {
		if seen := txns.Seen(); len(seen) > 0 {
			fmt.Printf("FAIL: the Mongo stores sent %d commands inside a multi-document transaction (first: %s); "+
				"a server without transactions would apply them half-way\n", len(seen), seen[0])
			code = 1
		} else {
			fmt.Printf("mongo tests: %d commands sent, none inside a multi-document transaction\n", txns.Commands())
		}
		if len(serverUnverified) > 0 {
			fmt.Printf("mongo tests: UNVERIFIED on %s:\n", serverName)
			for _, u := range serverUnverified {
				fmt.Printf("mongo tests:   %s\n", u)
			}
		}
	}
	cleanup()
	os.Exit(code)
}

func chooseServer() (cleanup func()) {
	cleanup = func() {}
	if uri := os.Getenv("MONGODB_URI"); uri != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		server, serverErr = mongo.Connect(ctx, uri, options.Client().SetMonitor(txns.Monitor()))
		serverURI, serverName = uri, "MongoDB at MONGODB_URI"
		if serverErr == nil {
			cleanup = func() { _ = server.Disconnect(context.Background()) }
			serverName, serverUnverified = mongotest.Identify(ctx, server)
		}
		fmt.Println("mongo tests: server:", serverName)
		return cleanup
	}
	if why := dockerMissing(); why != "" {
		noServer = "MONGODB_URI is unset and " + why
		fmt.Println("mongo tests:", noServer)
		return cleanup
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c, err := tcmongo.Run(ctx, "mongo:7", tcmongo.WithReplicaSet("rs0"))
	if err != nil {
		if c != nil {
			_ = c.Terminate(context.Background())
		}
		noServer = "a Docker engine answers but the MongoDB container did not start: " + err.Error()
		fmt.Println("mongo tests:", noServer)
		return cleanup
	}
	uri, err := c.ConnectionString(ctx)
	if err == nil {
		// The replica set's member is the container's own address; talk to
		// the mapped port directly instead of discovering it.
		uri += "&directConnection=true"
		server, serverErr = mongo.Connect(ctx, uri, options.Client().SetMonitor(txns.Monitor()))
		serverURI = uri
	} else {
		serverErr = err
	}
	serverName = "MongoDB 7 single-node replica set (testcontainers)"
	fmt.Println("mongo tests: server:", serverName)
	return func() {
		if server != nil {
			_ = server.Disconnect(context.Background())
		}
		_ = c.Terminate(context.Background())
	}
}

// dockerMissing says why no Docker engine can be used, or "" if one
// answers. It looks for a socket first, so a machine without Docker costs
// nothing, and then asks the engine with a short timeout, recovering from
// the panics testcontainers can raise without one.
func dockerMissing() (why string) {
	if os.Getenv("DOCKER_HOST") == "" {
		candidates := []string{"/var/run/docker.sock"}
		if home, err := os.UserHomeDir(); err == nil {
			candidates = append(candidates, filepath.Join(home, ".docker", "run", "docker.sock"),
				filepath.Join(home, ".testcontainers.properties"))
		}
		if xdg := os.Getenv("XDG_RUNTIME_DIR"); xdg != "" {
			candidates = append(candidates, filepath.Join(xdg, "docker.sock"))
		}
		found := false
		for _, p := range candidates {
			if _, err := os.Stat(p); err == nil {
				found = true
				break
			}
		}
		if !found {
			return "no Docker engine (no DOCKER_HOST, no socket in " + strings.Join(candidates, ", ") + ")"
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	answer := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				answer <- fmt.Errorf("testcontainers panicked: %v", r)
			}
		}()
		p, err := testcontainers.ProviderDefault.GetProvider()
		if err != nil {
			answer <- err
			return
		}
		defer p.Close()
		answer <- p.Health(ctx)
	}()
	select {
	case err := <-answer:
		if err != nil {
			return "the Docker engine does not answer: " + err.Error()
		}
		return ""
	case <-ctx.Done():
		return "the Docker engine did not answer within 15 s"
	}
}

// client returns the chosen server, or skips t saying what stays
// unverified.
func client(t *testing.T) *mongodrv.Client {
	t.Helper()
	if serverErr != nil {
		t.Fatalf("%s: %v", serverName, serverErr)
	}
	if server == nil {
		t.Skipf(unverified, noServer)
	}
	t.Logf("server: %s", serverName)
	return server
}

func TestContracts(t *testing.T) {
	c := client(t)
	// A second client, as a second process has its own connections.
	second, err := mongo.Connect(mongotest.Ctx(t), serverURI, options.Client().SetMonitor(txns.Monitor()))
	if err != nil {
		t.Fatalf("second client: %v", err)
	}
	t.Cleanup(func() { _ = second.Disconnect(context.Background()) })
	mongotest.Contracts(t, c, second)
}

func TestIndexes(t *testing.T) {
	mongotest.Indexes(t, client(t))
}

func TestStores(t *testing.T) {
	mongotest.Stores(t, client(t))
}

func TestMigrations(t *testing.T) {
	mongotest.Migrations(t, client(t))
}

func TestWriteConcernOnTheWire(t *testing.T) {
	client(t)
	mongotest.WriteConcernOnTheWire(t, serverURI)
}

// These need no server: they prove the unreachable path.
func TestConnectUnreachableIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Port 1 on loopback: nothing listens, the connection is refused.
	c, err := mongo.Connect(ctx, "mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300&connectTimeoutMS=300")
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("connect to nothing: %v, want ErrUnavailable", err)
	}
	if c != nil {
		t.Fatal("a client came back with the error")
	}
	if _, err := mongo.Connect(ctx, "mongodb://user:secret@127.0.0.1:1/?serverSelectionTimeoutMS=300"); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("the error shows the URI's password: %v", err)
	}
	if _, err := mongo.Connect(ctx, "postgres://nope"); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("not a mongo URI: %v, want ErrInvalidInput", err)
	}
}

func TestPingUnreachableIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := mongodrv.Connect(ctx, options.Client().ApplyURI("mongodb://127.0.0.1:1/?serverSelectionTimeoutMS=300"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(ctx)
	if err := mongo.NewPinger(c).Ping(ctx); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("ping nothing: %v, want ErrUnavailable", err)
	}
}

func TestWaker(t *testing.T) {
	client(t) // skips, saying why, where there is no server
	// The Waker's client holds its first read of the enqueue signal back a
	// second, so that an enqueue right after the first wake-up lands before
	// that read if the read came after the wake-up: the order the case
	// "an enqueue just after the first wake-up" checks is then not left to
	// the scheduler.
	var reads atomic.Int32
	slowFirstRead := &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		if e.CommandName == "find" && e.Command.Lookup("find").StringValue() == "job_signals" && reads.Add(1) == 1 {
			time.Sleep(time.Second)
		}
	}}
	c, err := mongo.Connect(mongotest.Ctx(t), serverURI, options.Client().SetMonitor(slowFirstRead))
	if err != nil {
		t.Fatalf("the waker's client: %v", err)
	}
	t.Cleanup(func() { _ = c.Disconnect(context.Background()) })
	second, err := mongo.Connect(mongotest.Ctx(t), serverURI, options.Client().SetMonitor(txns.Monitor()))
	if err != nil {
		t.Fatalf("second client: %v", err)
	}
	t.Cleanup(func() { _ = second.Disconnect(context.Background()) })
	mongotest.Waker(t, c, second)
}

// A job this Settle releases may be leased and settled again by another
// worker before Settle reads its markers back (the contract's chaos case
// did it on FerretDB v2): the first settlement was applied and must not be
// reported lost. The stale settlement beside it makes the matched count
// short, so Settle does read back.
func TestSettleReadsItsMarkerBackAfterAnotherSettlement(t *testing.T) {
	c := client(t)
	ctx := mongotest.Ctx(t)
	jobs := mongo.NewJobStore(mongotest.NewDB(t, c))
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	j, err := domain.NewJob(contract.JobID("j1"), "https://local.example/a/1", "https://remote.example/inbox", "sender", "https://local.example/users/a#main-key", []byte(`{}`), now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Enqueue(ctx, []domain.Job{j}); err != nil {
		t.Fatal(err)
	}
	lease := func(token string) {
		t.Helper()
		got, err := jobs.LeaseBatch(ctx, ports.LeaseRequest{Owner: "w", Token: token, Now: now, Until: now.Add(2 * time.Minute), Limit: 1, PerHost: 2})
		if err != nil || len(got) != 1 {
			t.Fatalf("lease %s: %v %v", token, got, err)
		}
	}
	lease("first")
	var again []error
	mongo.SetAfterSettleWrite(jobs, func() {
		mongo.SetAfterSettleWrite(jobs, nil)
		lease("second")
		again, err = jobs.Settle(ctx, []ports.Settlement{{ID: j.ID, Token: "second", State: domain.JobSucceeded, Attempts: 1, FinishedAt: now}})
		if err != nil {
			t.Errorf("second settlement: %v", err)
		}
	})
	lost, err := jobs.Settle(ctx, []ports.Settlement{
		{ID: j.ID, Token: "stale", State: domain.JobSucceeded, Attempts: 1, FinishedAt: now},
		{ID: j.ID, Token: "first", State: domain.JobQueued, RunAt: now},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || again[0] != nil {
		t.Fatalf("the second holder's settlement: %v", again)
	}
	if !errors.Is(lost[0], domain.ErrLeaseLost) {
		t.Errorf("the stale settlement: %v, want ErrLeaseLost", lost[0])
	}
	if lost[1] != nil {
		t.Errorf("the first holder's release, applied before the second lease, reported %v", lost[1])
	}
}
