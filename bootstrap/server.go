package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/heraldfed/herald/adapters/httpapi"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
)

// Server is one Herald process: the HTTP surface and the delivery engine
// over a prepared store.
type Server struct {
	cfg    Config
	http   *httpapi.Handler
	engine *engine.Engine
	app    *application.Application
	ready  *Readiness
	stores *Stores
	log    *slog.Logger

	mu       sync.Mutex
	listener net.Listener
	bound    chan struct{}
}

// NewServerFrom assembles a server (the Wire injector calls it).
func NewServerFrom(cfg Config, h *httpapi.Handler, eng *engine.Engine, app *application.Application, ready *Readiness, stores *Stores, log *slog.Logger) *Server {
	return &Server{cfg: cfg, http: h, engine: eng, app: app, ready: ready, stores: stores, log: log, bound: make(chan struct{})}
}

// Ready is what /readyz reports (for tests of the shutdown order).
func (s *Server) Ready(ctx context.Context) error { return s.ready.Ready(ctx) }

// Stores exposes the prepared store (for the demo and tests, which seed
// followers the client API cannot create).
func (s *Server) Stores() *Stores { return s.stores }

// App exposes the use cases (for the CLI and tests).
func (s *Server) App() *application.Application { return s.app }

// Engine exposes the delivery engine (for the CLI and tests).
func (s *Server) Engine() *engine.Engine { return s.engine }

// Addr waits until the server listens and returns its address.
func (s *Server) Addr(ctx context.Context) (net.Addr, error) {
	select {
	case <-s.bound:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.listener.Addr(), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Run starts the workers, the reaper and the HTTP server (the store was
// prepared by OpenStores: SPEC §4's last step), and serves until ctx ends.
// Then /readyz turns false, the listener stops accepting, in-flight
// requests and deliveries get the grace period, and Run returns.
func (s *Server) Run(ctx context.Context) error {
	if _, err := s.app.InstanceActor.Handle(ctx); err != nil {
		return fmt.Errorf("instance actor: %w", err)
	}
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		// Most often a second `make run` beside the first.
		return fmt.Errorf("listen on %s: %w: another server (another Herald?) listens there: stop it, or give this one another HERALD_ADDR", s.cfg.Addr, err)
	}
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Addr, err)
	}
	s.mu.Lock()
	s.listener = ln
	s.mu.Unlock()
	close(s.bound)

	engineCtx, stopEngine := context.WithCancel(context.WithoutCancel(ctx))
	engineDone := make(chan struct{})
	go func() {
		defer close(engineDone)
		_ = s.engine.Run(engineCtx)
	}()
	// Fan-outs a crash interrupted (here or in another process) go on
	// after their recorded cursor.
	resumerDone := make(chan struct{})
	go func() {
		defer close(resumerDone)
		s.app.FanOuts.RunResumer(engineCtx)
	}()
	// Persona deletions begun here, by the CLI or by a process that died:
	// their Delete goes out, then their data and, once it is delivered,
	// their key.
	deletionsDone := make(chan struct{})
	go func() {
		defer close(deletionsDone)
		s.app.PersonaDeletions.Run(engineCtx)
	}()

	// Polls written here: their counts told, their close made and told
	// (whichever process gets there first; the store decides).
	pollsDone := make(chan struct{})
	go func() {
		defer close(pollsDone)
		s.app.Federation.Polls.Run(engineCtx)
	}()

	srv := &http.Server{
		Handler:           s.http,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	s.ready.started.Store(true)
	ecfg := s.engine.Config()
	s.log.Info("herald listening", "addr", ln.Addr().String(), "domain", s.cfg.Domain, "store", s.cfg.Store,
		"workers", ecfg.Workers, "per_host", ecfg.PerHost, "version", Version)

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		runErr = fmt.Errorf("http server: %w", err)
	}

	s.log.Info("shutting down", "grace", s.cfg.ShutdownGrace)
	s.ready.stopping.Store(true)
	stopEngine()
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownGrace)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Warn("http shutdown", "err", err)
	}
	<-engineDone
	<-resumerDone
	<-deletionsDone
	<-pollsDone
	s.log.Info("stopped")
	return runErr
}
