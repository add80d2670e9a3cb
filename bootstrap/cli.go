package bootstrap

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// ErrMemoryStore: a maintenance command was asked of the in-memory store,
// whose data lives only inside the server process that holds it.
var ErrMemoryStore = errors.New("HERALD_STORE=memory keeps its data inside the running server process: " +
	"this command cannot reach it; use the operator API (/admin/api) of that server, or a store that keeps data (sqlite, postgres, mongo)")

// OpenStoresForCLI opens the configured store for a maintenance command:
// no engine, no HTTP server. It connects and checks that the schema is at
// this build's version (it does not migrate: that is `herald migrate up`,
// or what a server does at start). On SQLite it opens the data directory
// beside the server that may own it. The cleanup closes it.
func OpenStoresForCLI(ctx context.Context, cfg Config, log *slog.Logger) (*Stores, func(), error) {
	st, err := openStore(ctx, cfg, storeLog(cfg, log), false)
	if err != nil {
		return nil, nil, err
	}
	if m, ok := st.(migrator); ok {
		v, dirty, err := m.version(ctx)
		latest, lerr := m.latest()
		if err := schemaState(v, dirty, latest, errors.Join(err, lerr)); err != nil {
			st.close()
			return nil, nil, fmt.Errorf("%w (run `herald migrate up`, or start a server, which migrates)", err)
		}
	}
	return st.ports(), st.close, nil
}

// OpenOperator is the operator use cases over the configured store, for
// the CLI. It has no engine to wake: the servers' workers find retried or
// resumed jobs at their next poll (5 s at most).
func OpenOperator(ctx context.Context, cfg Config, log *slog.Logger) (*application.Operator, func(), error) {
	policy, err := ProvideNamePolicy(cfg)
	if err != nil {
		return nil, nil, err
	}
	s, cleanup, err := OpenStoresForCLI(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	return ProvideOperator(cfg, s, policy, system.Clock{}, nil), cleanup, nil
}

// OpenModerator is the moderation use cases over the configured store, for
// the CLI. A block it makes reaches the servers when they next read the
// rules (within 10 s); a suspension ends the domain's queued deliveries in
// the store at once.
func OpenModerator(ctx context.Context, cfg Config, log *slog.Logger) (*application.Moderator, func(), error) {
	s, cleanup, err := OpenStoresForCLI(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	mod := ProvideModeration(cfg, s, nil, system.Clock{}, log)
	return ProvideModerator(cfg, s, mod, ProvideURLs(cfg), system.Clock{}, log, nil), cleanup, nil
}

// RotateKeys gives the actors named (every persona and group when names
// is empty) a new key pair, as `herald keys
// rotate` does after a leak, and queues each one's Update{Person} (or
// Update{Group}) with the new key to its followers. The servers' engines
// deliver them at their next poll (5 s at most; at once on PostgreSQL)
// and read the new keys from the store: a server that signed with an old
// key it had cached sends that delivery again with the new one when the
// remote refuses it (application.RotateKeyHandler).
func RotateKeys(ctx context.Context, cfg Config, log *slog.Logger, names []string) ([]application.KeyRotated, error) {
	s, cleanup, err := OpenStoresForCLI(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	clock := system.Clock{}
	mod := ProvideModeration(cfg, s, nil, clock, log)
	d := applicationDeps(cfg, s, sanitizer.NewHTMLSanitizer(), mod, clock, system.IDs{}, ProvideURLs(cfg), log)
	d.Keys = security.RSAKeys{}
	return application.New(d).Federation.RotateKey.Named(ctx, names)
}

// withOperator runs f on the operator use cases over the configured
// store (OpenOperator), then closes the store.
func withOperator[T any](ctx context.Context, cfg Config, log *slog.Logger, f func(*application.Operator) (T, error)) (T, error) {
	op, cleanup, err := OpenOperator(ctx, cfg, log)
	if err != nil {
		var zero T
		return zero, err
	}
	defer cleanup()
	return f(op)
}

// withModerator runs f on the moderation use cases over the configured
// store (OpenModerator), then closes the store.
func withModerator[T any](ctx context.Context, cfg Config, log *slog.Logger, f func(*application.Moderator) (T, error)) (T, error) {
	mod, cleanup, err := OpenModerator(ctx, cfg, log)
	if err != nil {
		var zero T
		return zero, err
	}
	defer cleanup()
	return f(mod)
}

// QueueStats counts the configured store's jobs by state and host, as
// `herald jobs stats` does.
func QueueStats(ctx context.Context, cfg Config, log *slog.Logger) (application.QueueStats, error) {
	return withOperator(ctx, cfg, log, func(op *application.Operator) (application.QueueStats, error) { return op.Queue(ctx) })
}

// Instances lists the remote hosts with their breaker state (only the
// quarantined ones when quarantinedOnly), as `herald instances list` does.
func Instances(ctx context.Context, cfg Config, log *slog.Logger, quarantinedOnly bool) ([]application.InstanceView, error) {
	return withOperator(ctx, cfg, log, func(op *application.Operator) ([]application.InstanceView, error) {
		return op.Instances(ctx, quarantinedOnly)
	})
}

// LiftQuarantine lifts a host's quarantine, as `herald instances lift`
// does: its waiting jobs are due at once.
func LiftQuarantine(ctx context.Context, cfg Config, log *slog.Logger, host string) (application.LiftResult, error) {
	return withOperator(ctx, cfg, log, func(op *application.Operator) (application.LiftResult, error) { return op.Lift(ctx, host) })
}

// ReserveName reserves a system name, as `herald names reserve` does.
func ReserveName(ctx context.Context, cfg Config, log *slog.Logger, name string) (domain.ReservedName, error) {
	return withOperator(ctx, cfg, log, func(op *application.Operator) (domain.ReservedName, error) { return op.ReserveName(ctx, name) })
}

// ReleaseName releases a system name an operator had reserved, as `herald
// names release` does.
func ReleaseName(ctx context.Context, cfg Config, log *slog.Logger, name string) error {
	_, err := withOperator(ctx, cfg, log, func(op *application.Operator) (struct{}, error) { return struct{}{}, op.ReleaseName(ctx, name) })
	return err
}

// DomainBlocks lists the domain blocks, as `herald domain-blocks list`
// does.
func DomainBlocks(ctx context.Context, cfg Config, log *slog.Logger) ([]domain.DomainBlock, error) {
	return withModerator(ctx, cfg, log, func(mod *application.Moderator) ([]domain.DomainBlock, error) { return mod.Blocks(ctx) })
}

// ExportDomainBlocks writes the domain blocks to w in Mastodon's CSV
// format, as `herald domain-blocks export` does, and counts them.
func ExportDomainBlocks(ctx context.Context, cfg Config, log *slog.Logger, w io.Writer) (int, error) {
	return withModerator(ctx, cfg, log, func(mod *application.Moderator) (int, error) { return mod.ExportBlocks.Handle(ctx, w) })
}

// ImportDomainBlocks imports a Mastodon domain-block list from r into the
// configured store (on a dry run, says what it would change), as `herald
// domain-blocks import` does.
func ImportDomainBlocks(ctx context.Context, cfg Config, log *slog.Logger, r io.Reader, dryRun bool) (application.ImportResult, error) {
	return withModerator(ctx, cfg, log, func(mod *application.Moderator) (application.ImportResult, error) {
		return mod.ImportBlocks.Handle(ctx, application.ImportDomainBlocks{CSV: r, DryRun: dryRun})
	})
}

// DeletePersona begins the deletion of the persona name, whoever owns
// it, in the configured store, as `herald personas delete` does. The
// servers' deletions' pass (within application.PersonaDeletionEvery) sends
// its Delete and removes its data and key.
func DeletePersona(ctx context.Context, cfg Config, log *slog.Logger, name string) (application.DeletedPersona, error) {
	return withModerator(ctx, cfg, log, func(mod *application.Moderator) (application.DeletedPersona, error) {
		return mod.DeletePersona.Handle(ctx, application.DeletePersona{Name: name, ByOperator: true})
	})
}

// SchemaStatus is what `herald migrate version` reports.
type SchemaStatus struct {
	Version uint // applied; 0 for none
	Dirty   bool
	Latest  uint // embedded in this build
}

// withMigrator runs f on the configured store's migrations. owner: it
// opens the store as its owner (on SQLite: refused while a server runs,
// which migrated at its start).
func withMigrator(ctx context.Context, cfg Config, log *slog.Logger, owner bool, f func(migrator) error) error {
	st, err := openStore(ctx, cfg, storeLog(cfg, log), owner)
	if err != nil {
		return err
	}
	defer st.close()
	m, ok := st.(migrator)
	if !ok {
		return fmt.Errorf("HERALD_STORE=%s has no schema to migrate", cfg.Store)
	}
	return f(m)
}

// MigrateUp applies every migration of this build (under the store's
// migration lock), then ensures the indexes, as a server does at start.
func MigrateUp(ctx context.Context, cfg Config, log *slog.Logger) error {
	return withMigrator(ctx, cfg, log, true, func(m migrator) error { return m.migrateUp(ctx, log) })
}

// MigrateDown reverts the last steps migrations.
func MigrateDown(ctx context.Context, cfg Config, steps int, log *slog.Logger) error {
	if steps < 1 {
		return fmt.Errorf("herald migrate down: --steps=%d: want 1 or more", steps)
	}
	return withMigrator(ctx, cfg, log, true, func(m migrator) error { return m.migrateDown(ctx, steps, log) })
}

// MigrationStatus reads the applied and the embedded versions.
func MigrationStatus(ctx context.Context, cfg Config) (SchemaStatus, error) {
	var s SchemaStatus
	err := withMigrator(ctx, cfg, nil, false, func(m migrator) error {
		var err error
		if s.Version, s.Dirty, err = m.version(ctx); err != nil {
			return err
		}
		s.Latest, err = m.latest()
		return err
	})
	return s, err
}

// Backup copies the SQLite store's database, consistently, into the
// directory dest (which must not hold one yet), while a server may be
// running: dest is then a data directory a server can start on
// (HERALD_DATA_DIR=dest). Other stores have their own tools.
func Backup(ctx context.Context, cfg Config, dest string) (BackupResult, error) {
	k, err := kindOf(cfg)
	if err != nil {
		return BackupResult{}, err
	}
	return k.backup(ctx, cfg, dest)
}

// BackupResult is what `herald backup` reports.
type BackupResult struct {
	Path  string // the copy's database file
	Bytes int64
}

// DemoOptions shape `herald demo`'s fan-out.
type DemoOptions struct {
	Posts int           // how many posts (0: 40)
	Every time.Duration // between posts (0: 2 s)
	// Ready, when set, is told the server's address once it listens.
	Ready func(addr string)
}

// demoHost is one loopback sink: how it answers and how many followers
// live there.
type demoHost struct {
	name      string
	followers int
	respond   func(w http.ResponseWriter, r *http.Request)
}

// RunDemo runs a server as `herald serve` does and, once it listens, a
// demo fan-out: four loopback "remote servers" (fast, slow, failing with
// 503: its jobs held after each failure and the host quarantined after ten,
// a minute or two in; gone with 410), followers of a demo persona on
// each, and a post every Every, so the operator page and /metrics move.
// Deliveries go to 127.0.0.1 only. It returns when ctx ends.
func RunDemo(ctx context.Context, cfg Config, log *slog.Logger, out io.Writer, opts DemoOptions) error {
	if opts.Posts <= 0 {
		opts.Posts = 40
	}
	if opts.Every <= 0 {
		opts.Every = 2 * time.Second
	}
	cfg.AllowPrivateTargets = true // the sinks are on loopback
	if cfg.AdminToken == "" {
		cfg.AdminToken = Secret(rand.Text())
		fmt.Fprintf(out, "HERALD_ADMIN_TOKEN was empty; this demo's admin token is %s\n", string(cfg.AdminToken))
	}
	hosts := []demoHost{
		{"fast", 40, func(w http.ResponseWriter, r *http.Request) {
			pause(r.Context(), time.Duration(20+randN(60))*time.Millisecond)
			w.WriteHeader(http.StatusAccepted)
		}},
		{"slow", 12, func(w http.ResponseWriter, r *http.Request) {
			pause(r.Context(), 1500*time.Millisecond)
			w.WriteHeader(http.StatusAccepted)
		}},
		{"failing", 15, func(w http.ResponseWriter, r *http.Request) {
			pause(r.Context(), 100*time.Millisecond)
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		}},
		{"gone", 4, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) }},
	}
	var sinks []string
	for _, h := range hosts {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("demo sink: %w", err)
		}
		s := &http.Server{Handler: http.HandlerFunc(h.respond), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = s.Serve(ln) }()
		defer s.Close()
		sinks = append(sinks, "http://"+ln.Addr().String())
		fmt.Fprintf(out, "demo remote server %-8s %s (%d followers)\n", h.name, sinks[len(sinks)-1], h.followers)
	}

	srv, cleanup, err := InitializeServer(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer cleanup()
	runErr := make(chan error, 1)
	go func() { runErr <- srv.Run(ctx) }()
	addr, err := srv.Addr(ctx)
	if err != nil {
		return <-runErr
	}
	base := "http://" + addr.String()
	fmt.Fprintf(out, "operator page: %s/admin   metrics: %s/metrics\n", base, base)
	if opts.Ready != nil {
		opts.Ready(addr.String())
	}

	if err := seedDemo(ctx, srv, hosts, sinks); err != nil {
		return errors.Join(fmt.Errorf("demo: %w", err), <-runErr)
	}
	app := srv.App()
	s, err := app.Login.Handle(ctx, application.Login{UserName: "demo", Password: demoPassword})
	if err != nil {
		return errors.Join(fmt.Errorf("demo login: %w", err), <-runErr)
	}
	for i := 1; i <= opts.Posts; i++ {
		res, err := app.Publish.Handle(ctx, application.Publish{UserID: s.User.ID, As: "demo",
			Content: fmt.Sprintf("demo post %d of %d", i, opts.Posts), Visibility: domain.VisibilityPublic})
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			log.Warn("demo post failed", "err", err)
		} else {
			log.Info("demo post", "n", i, "queued", res.Queued)
		}
		select {
		case <-ctx.Done():
		case <-time.After(opts.Every):
		}
		if ctx.Err() != nil {
			break
		}
	}
	if ctx.Err() == nil {
		fmt.Fprintln(out, "demo fan-out done; the server keeps running until interrupted")
	}
	return <-runErr
}

const demoPassword = "demo password, loopback only"

// seedDemo makes the demo persona and its remote followers.
func seedDemo(ctx context.Context, srv *Server, hosts []demoHost, sinks []string) error {
	app, st := srv.App(), srv.Stores()
	s, err := app.SignUp.Handle(ctx, application.SignUp{UserName: "demo", Password: demoPassword})
	if err != nil && !errors.Is(err, domain.ErrNameTaken) {
		return err
	}
	// The demo's own persona needs no approval (HERALD_REGISTRATIONS=approval).
	if err == nil && !s.User.Active() {
		if err := st.Users.SetUserStatus(ctx, s.User.ID, domain.UserActive); err != nil {
			return err
		}
	}
	followed := app.URLs.Persona("demo")
	now := time.Now()
	for i, h := range hosts {
		for k := range h.followers {
			actor := fmt.Sprintf("%s/users/%s%d", sinks[i], h.name, k)
			if err := st.Foreign.Upsert(ctx, domain.ForeignAvatar{ActorURI: actor, Inbox: actor + "/inbox",
				PreferredUsername: fmt.Sprintf("%s%d", h.name, k), Host: sinks[i][len("http://"):], FetchedAt: now}); err != nil {
				return err
			}
			f, err := domain.NewFollower(actor, followed, actor+"#follow", domain.FollowAccepted, now)
			if err != nil {
				return err
			}
			if _, err := st.Followers.Add(ctx, f); err != nil {
				return err
			}
		}
	}
	return nil
}

func pause(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func randN(n int64) int64 {
	v, err := rand.Int(rand.Reader, big.NewInt(n))
	if err != nil {
		return 0
	}
	return v.Int64()
}
