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
	"github.com/heraldfed/herald/test/contract"
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

	contract.InterpretError(t, postgres.InterpretError, []contract.DriverError{
		{Name: "no rows is not found", In: pgx.ErrNoRows, Want: domain.ErrNotFound},
		{Name: "wrapped no rows", In: fmt.Errorf("scan: %w", pgx.ErrNoRows), Want: domain.ErrNotFound},
		{Name: "reserved name taken", In: unique("reserved_names_pkey"), Want: domain.ErrNameTaken},
		{Name: "user name taken", In: unique("root_users_user_name_key"), Want: domain.ErrNameTaken},
		{Name: "avatar name taken", In: unique("avatars_name_key"), Want: domain.ErrNameTaken},
		{Name: "group name taken", In: unique("groups_name_key"), Want: domain.ErrNameTaken},
		{Name: "avatar id exists", In: unique("avatars_pkey"), Want: domain.ErrAlreadyExists},
		{Name: "job id exists", In: unique("jobs_pkey"), Want: domain.ErrAlreadyExists},
		{Name: "token exists", In: unique("tokens_pkey"), Want: domain.ErrAlreadyExists},
		{Name: "key id held by another actor", In: unique("foreign_avatars_public_key_id_key"), Want: domain.ErrAlreadyExists},
		{Name: "unnamed unique violation", In: unique(""), Want: domain.ErrAlreadyExists},
		{Name: "check violation is bad input", In: code("23514"), Want: domain.ErrInvalidInput},
		{Name: "not null violation is bad input", In: code("23502"), Want: domain.ErrInvalidInput},
		{Name: "NUL byte in text is bad input", In: code("22021"), Want: domain.ErrInvalidInput},
		{Name: "connection failure", In: code("08006"), Want: domain.ErrUnavailable},
		{Name: "admin shutdown", In: code("57P01"), Want: domain.ErrUnavailable},
		{Name: "starting up", In: code("57P03"), Want: domain.ErrUnavailable},
		{Name: "too many connections", In: code("53300"), Want: domain.ErrUnavailable},
		{Name: "connection refused", In: refused, Want: domain.ErrUnavailable},
		{Name: "network error", In: &net.OpError{Op: "read", Net: "tcp", Err: errors.New("connection reset by peer")}, Want: domain.ErrUnavailable},
		{Name: "unexpected EOF", In: fmt.Errorf("receive message: %w", io.ErrUnexpectedEOF), Want: domain.ErrUnavailable},
		{Name: "closed pool", In: puddle.ErrClosedPool, Want: domain.ErrUnavailable},
		{Name: "syntax error is a bug, no sentinel", In: code("42601"), Want: nil},
		{Name: "canceled stays canceled", In: context.Canceled, Want: nil},
		{Name: "deadline stays deadline", In: fmt.Errorf("query: %w", context.DeadlineExceeded), Want: nil},
		{Name: "other errors pass through", In: errors.New("boom"), Want: nil},
	})
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
