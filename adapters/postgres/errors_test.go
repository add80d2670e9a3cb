package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/heraldfed/herald/adapters/postgres"
	"github.com/heraldfed/herald/domain"
)

func TestInterpretError(t *testing.T) {
	t.Parallel()
	unique := func(constraint string) error {
		return &pgconn.PgError{Code: "23505", ConstraintName: constraint, Message: "duplicate key value violates unique constraint"}
	}
	code := func(c string) error { return &pgconn.PgError{Code: c, Message: "server says " + c} }

	// A real connection failure: nothing listens on port 1.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, refused := pgconn.Connect(ctx, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=2")
	if refused == nil {
		t.Fatal("connected to port 1")
	}

	sentinels := []error{domain.ErrNameTaken, domain.ErrAlreadyExists, domain.ErrNotFound,
		domain.ErrUnavailable, domain.ErrInvalidInput}
	tests := []struct {
		name string
		in   error
		want error // nil: no sentinel
	}{
		{"no rows is not found", pgx.ErrNoRows, domain.ErrNotFound},
		{"wrapped no rows", fmt.Errorf("scan: %w", pgx.ErrNoRows), domain.ErrNotFound},
		{"reserved name taken", unique("reserved_names_pkey"), domain.ErrNameTaken},
		{"user name taken", unique("root_users_user_name_key"), domain.ErrNameTaken},
		{"avatar name taken", unique("avatars_name_key"), domain.ErrNameTaken},
		{"group name taken", unique("groups_name_key"), domain.ErrNameTaken},
		{"avatar id exists", unique("avatars_pkey"), domain.ErrAlreadyExists},
		{"job id exists", unique("jobs_pkey"), domain.ErrAlreadyExists},
		{"token exists", unique("tokens_pkey"), domain.ErrAlreadyExists},
		{"key id held by another actor", unique("foreign_avatars_public_key_id_key"), domain.ErrAlreadyExists},
		{"unnamed unique violation", unique(""), domain.ErrAlreadyExists},
		{"check violation is bad input", code("23514"), domain.ErrInvalidInput},
		{"not null violation is bad input", code("23502"), domain.ErrInvalidInput},
		{"NUL byte in text is bad input", code("22021"), domain.ErrInvalidInput},
		{"connection failure", code("08006"), domain.ErrUnavailable},
		{"admin shutdown", code("57P01"), domain.ErrUnavailable},
		{"starting up", code("57P03"), domain.ErrUnavailable},
		{"too many connections", code("53300"), domain.ErrUnavailable},
		{"connection refused", refused, domain.ErrUnavailable},
		{"network error", &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, domain.ErrUnavailable},
		{"unexpected EOF", fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), domain.ErrUnavailable},
		{"closed pool", puddle.ErrClosedPool, domain.ErrUnavailable},
		{"syntax error is a bug, no sentinel", code("42601"), nil},
		{"canceled stays canceled", context.Canceled, nil},
		{"deadline stays deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), nil},
		{"other errors pass through", errors.New("boom"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := postgres.InterpretError(tt.in)
			if !errors.Is(got, tt.in) && !errors.Is(tt.in, got) {
				t.Fatalf("the driver error left the chain: %v", got)
			}
			for _, s := range sentinels {
				if want := s == tt.want; errors.Is(got, s) != want {
					t.Fatalf("InterpretError(%v) = %v; errors.Is(_, %v) = %v, want %v", tt.in, got, s, !want, want)
				}
			}
		})
	}
	if postgres.InterpretError(nil) != nil {
		t.Fatal("nil is not an error")
	}
	if got := postgres.InterpretError(context.Canceled); got != context.Canceled {
		t.Fatalf("context error changed: %v", got)
	}
}

// The translator sees real server errors the way the stores do.
func TestInterpretErrorOnServerErrors(t *testing.T) {
	t.Parallel()
	p := migrated(t)
	ctx := testCtx(t)
	accounts := postgres.NewAccountStore(p)
	u := domain.RootUser{ID: "u1", UserName: "alice", PasswordHash: "x", CreatedAt: time.Now()}
	if err := accounts.CreateUser(ctx, u); err != nil {
		t.Fatal(err)
	}
	if err := accounts.CreateUser(ctx, domain.RootUser{ID: "u2", UserName: "alice"}); !errors.Is(err, domain.ErrNameTaken) {
		t.Fatalf("taken user name: %v", err)
	}
	if err := accounts.CreateUser(ctx, domain.RootUser{ID: "u1", UserName: "bob"}); !errors.Is(err, domain.ErrAlreadyExists) {
		t.Fatalf("taken id: %v", err)
	}
	var pgErr *pgconn.PgError
	if err := accounts.CreateUser(ctx, domain.RootUser{ID: "u1", UserName: "bob"}); !errors.As(err, &pgErr) || pgErr.ConstraintName != "root_users_pkey" {
		t.Fatalf("driver error lost from the chain: %v", err)
	}
	// A NUL byte cannot be stored in text: bad input, and nothing stored.
	if err := accounts.CreateUser(ctx, domain.RootUser{ID: "u3", UserName: "nul\x00name"}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("NUL byte: %v", err)
	}
	names := postgres.NewNameRegistry(p)
	if err := names.Reserve(ctx, domain.ReservedName{Name: "x", Kind: "wizard", OwnerID: "o", CreatedAt: time.Now()}); !errors.Is(err, domain.ErrInvalidInput) {
		t.Fatalf("unknown kind: %v", err)
	}
	// A closed pool: the store is gone, which callers may retry elsewhere.
	p.Close()
	if _, err := accounts.UserByName(ctx, "alice"); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("closed pool: %v", err)
	}
	if err := postgres.NewPinger(p).Ping(ctx); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("ping on closed pool: %v", err)
	}
}

func TestConnect(t *testing.T) {
	t.Parallel()
	ctx := testCtx(t)
	newSchema(t) // skips without a server
	pool, err := postgres.Connect(ctx, databaseURL())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer pool.Close()
	if err := postgres.NewPinger(pool).Ping(ctx); err != nil {
		t.Fatalf("ping: %v", err)
	}
	_, err = postgres.Connect(ctx, "postgres://postgres:secret-pw@127.0.0.1:1/test?sslmode=disable&connect_timeout=2")
	if !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("unreachable server: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("password in the error: %v", err)
	}
	if _, err := postgres.Connect(ctx, "postgres://%zz"); err == nil || errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("bad URL: %v", err)
	}
}
