package bootstrap_test

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/heraldfed/herald/adapters/mongo"
	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/bootstrap"
)

// OpenStores fills every port of Stores on every store: a port left nil
// would fail at the first request that needs it, not at start. Wakes is
// nil where the store has no other process to hear (memory, SQLite), as
// Stores documents. PostgreSQL and Mongo run when DATABASE_URL and
// MONGODB_URI name a server, each in a schema or database of its own.
func TestOpenStoresFillsEveryPort(t *testing.T) {
	t.Parallel()
	stores := map[string]func(t *testing.T) map[string]string{
		"memory": func(*testing.T) map[string]string { return map[string]string{"HERALD_STORE": "memory"} },
		"sqlite": func(t *testing.T) map[string]string {
			return map[string]string{"HERALD_STORE": "sqlite", "HERALD_DATA_DIR": t.TempDir()}
		},
		"postgres": func(t *testing.T) map[string]string {
			return map[string]string{"HERALD_STORE": "postgres", "DATABASE_URL": freshPostgresSchema(t)}
		},
		"mongo": func(t *testing.T) map[string]string {
			return map[string]string{"HERALD_STORE": "mongo", "MONGODB_URI": os.Getenv("MONGODB_URI"), "HERALD_MONGO_DATABASE": freshMongoDatabase(t)}
		},
	}
	noWakes := map[string]bool{"memory": true, "sqlite": true}
	for name, env := range stores {
		t.Run(name, func(t *testing.T) {
			vars := env(t)
			cfg, err := bootstrap.LoadConfig(nil, func(k string) string { return vars[k] }, io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			s, cleanup, err := bootstrap.OpenStores(ctx, cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			everyPort(t, name+" for a server", s, noWakes[name])
			// A maintenance command gets every port too, beside the server
			// (memory's data lives in the server alone).
			cli, closeCLI, err := bootstrap.OpenStoresForCLI(ctx, cfg, nil)
			if name == "memory" {
				if !errors.Is(err, bootstrap.ErrMemoryStore) {
					t.Errorf("the CLI on memory: %v", err)
				}
			} else if err != nil {
				t.Errorf("the CLI on %s: %v", name, err)
			} else {
				defer closeCLI()
				everyPort(t, name+" for the CLI", cli, noWakes[name])
			}
			if _, err := s.Moderation.DomainBlocks(ctx); err != nil {
				t.Errorf("the moderation store of %s: %v", name, err)
			}
			if _, err := s.Reports.Reports(ctx, true, 1); err != nil {
				t.Errorf("the report store of %s: %v", name, err)
			}
		})
	}
}

// everyPort fails for each port of s left nil (Wakes may be, when
// noWakes).
func everyPort(t *testing.T, what string, s *bootstrap.Stores, noWakes bool) {
	t.Helper()
	v := reflect.ValueOf(*s)
	for i := range v.NumField() {
		f, field := v.Field(i), v.Type().Field(i)
		if f.Kind() != reflect.Interface || (field.Name == "Wakes" && noWakes) {
			continue
		}
		if f.IsNil() {
			t.Errorf("Stores.%s is nil on %s", field.Name, what)
		}
	}
}

// freshPostgresSchema is DATABASE_URL with a schema of the test's own on
// its search path, dropped at the end; the test skips without it.
func freshPostgresSchema(t *testing.T) string {
	t.Helper()
	dbURL := os.Getenv("DATABASE_URL")
	if dbURL == "" {
		t.Skip("DATABASE_URL is not set: the postgres stores are not opened here")
	}
	ctx := context.Background()
	admin, err := postgres.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	schema := "boot_" + strings.ToLower(rand.Text()[:10])
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE")
		admin.Close()
	})
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

// freshMongoDatabase names a database of the test's own at MONGODB_URI,
// dropped at the end; the test skips without it.
func freshMongoDatabase(t *testing.T) string {
	t.Helper()
	uri := os.Getenv("MONGODB_URI")
	if uri == "" {
		t.Skip("MONGODB_URI is not set: the mongo stores are not opened here")
	}
	name := "boot_" + strings.ToLower(rand.Text()[:10])
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		client, err := mongo.Connect(ctx, uri)
		if err != nil {
			t.Logf("drop %s: %v", name, err)
			return
		}
		defer client.Disconnect(ctx)
		_ = client.Database(name).Drop(ctx)
	})
	return name
}
