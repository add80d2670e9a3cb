package mastodon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// StreamingConfig paces and bounds the streaming API. Herald may run as
// several processes on one store with no event bus between them, so a
// stream is not fed by events: each connection reads the stores every
// Poll for what is new to it since what it last sent.
type StreamingConfig struct {
	// Poll is how often a connection reads the stores (2 s).
	Poll time.Duration
	// PerToken and Total cap the open connections of one token (4) and
	// of this process (1000); past them the upgrade answers 429.
	PerToken, Total int
}

const (
	defaultStreamPoll     = 2 * time.Second
	defaultStreamPerToken = 4
	defaultStreamTotal    = 1000
	// streamPage is the most one poll reads of a stream: what more came
	// in one interval is not sent (the client's timeline read shows it).
	streamPage = 20
	// streamSubscriptions caps the streams of one connection, each of
	// which is a read per poll.
	streamSubscriptions = 8
	// streamPing is how often an idle connection is pinged, so proxies
	// keep it and a dead peer is noticed.
	streamPing = 30 * time.Second
	// streamWrite bounds one write or ping to a slow peer.
	streamWrite = 10 * time.Second
	// streamReadLimit bounds a client's message (subscribe, unsubscribe).
	streamReadLimit = 4096
)

func (c StreamingConfig) withDefaults() StreamingConfig {
	if c.Poll <= 0 {
		c.Poll = defaultStreamPoll
	}
	if c.PerToken <= 0 {
		c.PerToken = defaultStreamPerToken
	}
	if c.Total <= 0 {
		c.Total = defaultStreamTotal
	}
	return c
}

// streamSlots counts the open connections, per token and in all.
type streamSlots struct {
	cfg      StreamingConfig
	mu       sync.Mutex
	total    int
	perToken map[string]int
}

func newStreamSlots(cfg StreamingConfig) *streamSlots {
	return &streamSlots{cfg: cfg, perToken: map[string]int{}}
}

// take holds a slot for the token (its hash); false when none is free.
func (s *streamSlots) take(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.total >= s.cfg.Total || s.perToken[token] >= s.cfg.PerToken {
		return false
	}
	s.total++
	s.perToken[token]++
	return true
}

func (s *streamSlots) give(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total--
	if s.perToken[token]--; s.perToken[token] <= 0 {
		delete(s.perToken, token)
	}
}

func (m *Routes) registerStreaming(r routeAdder) {
	r.Handle("/api/v1/streaming/health", http.HandlerFunc(streamingHealth), http.MethodGet)
	// An upgrade counts as one call of its token (of its address when
	// it has none), so failed upgrades are limited as any call is.
	h := m.perToken.WrapBy(streamTokenKey, http.HandlerFunc(m.streaming))
	r.Handle("/api/v1/streaming", h, http.MethodGet)
	r.Handle("/api/v1/streaming/", h, http.MethodGet)
}

// streamTokenKey names an upgrade's rate-limit bucket by its token's
// hash, wherever the token was sent, as tokenKey does for other calls.
func streamTokenKey(r *http.Request) string {
	if t, _ := streamToken(r); t != "" {
		return "token:" + domain.HashToken(t)
	}
	return ""
}

// streamingHealth is GET /api/v1/streaming/health, as Mastodon's.
func streamingHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write([]byte("OK"))
}

// streamToken is the access token of an upgrade: the access_token
// parameter, the Authorization header, or Sec-WebSocket-Protocol (where
// browsers' WebSocket API lets a client put it); proto tells the last,
// whose value the answer must echo.
func streamToken(r *http.Request) (token string, proto bool) {
	if t := r.URL.Query().Get("access_token"); t != "" {
		return t, false
	}
	if t := bearer(r); t != "" {
		return t, false
	}
	if t := r.Header.Get("Sec-WebSocket-Protocol"); t != "" {
		return t, true
	}
	return "", false
}

// streaming is GET /api/v1/streaming: a WebSocket that sends the events
// of the streams named by stream= (and tag=) and by subscribe messages.
// It is refused before the upgrade without a valid token, for a stream
// its scope does not grant, and past the connection caps.
func (m *Routes) streaming(w http.ResponseWriter, r *http.Request) {
	token, proto := streamToken(r)
	p, err := m.api.Authenticate.Handle(r.Context(), token)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	if m.api.Clock == nil {
		writeError(w, r, m.log, fmt.Errorf("%w: streaming has no clock", domain.ErrUnavailable))
		return
	}
	s := &streamSession{m: m, p: p, token: token}
	if name := r.URL.Query().Get("stream"); name != "" {
		if err := s.subscribe(r.Context(), streamRequest{Stream: name, Tag: r.URL.Query().Get("tag")}); err != nil {
			writeError(w, r, m.log, err)
			return
		}
	}
	key := domain.HashToken(token)
	if !m.streams.take(key) {
		writeJSON(w, http.StatusTooManyRequests, mastodonError{Error: "Too many streaming connections"})
		return
	}
	defer m.streams.give(key)
	opts := &websocket.AcceptOptions{
		// Any origin: the socket is authorized by its token, never by
		// a cookie, so a page of another origin gains nothing by it
		// (web clients such as Elk and Phanpy are of other origins).
		InsecureSkipVerify: true,
	}
	if proto {
		opts.Subprotocols = []string{token}
	}
	c, err := websocket.Accept(w, r, opts)
	if err != nil {
		m.log.Debug("streaming upgrade failed", "err", err)
		return
	}
	c.SetReadLimit(streamReadLimit)
	s.c = c
	err = s.run(r.Context())
	status := websocket.CloseStatus(err)
	switch {
	case status == websocket.StatusPolicyViolation:
		_ = c.Close(status, "access token no longer valid")
	case status == -1 && !errors.Is(err, context.Canceled):
		m.log.Debug("stream ended", "err", err)
		_ = c.Close(websocket.StatusInternalError, "")
	default:
		_ = c.CloseNow()
	}
}

// streamRequest is a client's message: {"type":"subscribe","stream":
// "hashtag","tag":"fedi"}, or unsubscribe.
type streamRequest struct {
	Type   string `json:"type"`
	Stream string `json:"stream"`
	Tag    string `json:"tag"`
}

// streamEvent is a frame sent: the stream (["hashtag","fedi"]), the event
// and its payload, a JSON entity as a string (a status id for delete).
type streamEvent struct {
	Stream  []string `json:"stream"`
	Event   string   `json:"event"`
	Payload string   `json:"payload"`
}

// streamError is a frame telling a client its message was refused.
type streamError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
}

// streamSession is one connection: its principal and subscriptions. One
// goroutine (run) owns them; another only reads messages.
type streamSession struct {
	m     *Routes
	p     application.Principal
	token string
	c     *websocket.Conn
	subs  []*subscription
}

// run polls every interval until the peer goes, the token is revoked or
// ctx ends; client messages are read beside it.
func (s *streamSession) run(parent context.Context) error {
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	reqs := make(chan streamRequest)
	go func() {
		for {
			// On the parent: ending ctx would close the socket (as
			// coder/websocket ends a cancelled read) before the caller
			// says why.
			_, b, err := s.c.Read(parent)
			if err != nil {
				cancel(err)
				return
			}
			var req streamRequest
			if json.Unmarshal(b, &req) != nil {
				req = streamRequest{}
			}
			select {
			case reqs <- req:
			case <-ctx.Done():
				return
			}
		}
	}()
	clock := s.m.api.Clock
	lastPing := clock.Now()
	var pinging atomic.Bool
	for {
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case req := <-reqs:
			if err := s.handle(ctx, req); err != nil {
				return err
			}
		case <-clock.After(s.m.streams.cfg.Poll):
			if err := s.poll(ctx); err != nil {
				return err
			}
			if now := clock.Now(); now.Sub(lastPing) >= streamPing && !pinging.Load() {
				// Not in this loop: a ping waits for its pong, which the
				// reader above reads only once this loop has taken the
				// message it holds (a client that sent one meanwhile would
				// wait out streamWrite, and its stream would end).
				lastPing = now
				pinging.Store(true)
				go func() {
					defer pinging.Store(false)
					pctx, done := context.WithTimeout(ctx, streamWrite)
					defer done()
					if err := s.c.Ping(pctx); err != nil {
						cancel(err)
					}
				}()
			}
		}
	}
}

// handle answers a subscribe or unsubscribe message; a refused one gets
// an error frame and the connection goes on.
func (s *streamSession) handle(ctx context.Context, req streamRequest) error {
	var err error
	switch req.Type {
	case "subscribe":
		err = s.subscribe(ctx, req)
	case "unsubscribe":
		s.unsubscribe(req)
	default:
		err = fmt.Errorf("%w: unknown message type %q", errBadParams, req.Type)
	}
	if err == nil {
		return nil
	}
	status, msg := statusTable.Classify(err)
	if status >= 500 {
		return err
	}
	return s.send(ctx, streamError{Error: msg, Status: status})
}

// poll sends what is new on every subscription. The token is read
// again first, so a revoked one stops its streams within one interval.
func (s *streamSession) poll(ctx context.Context) error {
	p, err := s.m.api.Authenticate.Handle(ctx, s.token)
	if errors.Is(err, domain.ErrUnauthorized) {
		return websocket.CloseError{Code: websocket.StatusPolicyViolation}
	}
	if err != nil {
		s.m.log.Warn("stream poll failed", "err", err)
		return nil // the store may be back at the next interval
	}
	s.p = p
	for _, sub := range s.subs {
		events, err := sub.poll(withAccounts(ctx), s)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			s.m.log.Warn("stream poll failed", "stream", sub.name, "err", err)
			continue
		}
		for _, e := range events {
			if err := s.send(ctx, e); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *streamSession) send(ctx context.Context, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, streamWrite)
	defer cancel()
	return s.c.Write(ctx, websocket.MessageText, b)
}

// streamingURL is where the instance entity tells clients to stream
// from: this host, by ws or wss as its API is served by http or https.
func (m *Routes) streamingURL() string {
	return "ws" + strings.TrimPrefix(m.app.URLs.Base(), "http")
}
