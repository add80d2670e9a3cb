package mastodon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// frame is what the stream sends: an event, or an error.
type frame struct {
	Stream  []string `json:"stream"`
	Event   string   `json:"event"`
	Payload string   `json:"payload"`
	Error   string   `json:"error"`
	Status  int      `json:"status"`
}

// wsStream is an open streaming connection whose frames a goroutine
// reads into frames.
type wsStream struct {
	s      *server
	c      *websocket.Conn
	frames chan frame
	// err is why the stream ended, set before frames is closed.
	err error
}

func (s *server) wsURL(query url.Values) string {
	return "ws" + strings.TrimPrefix(s.URL, "http") + "/api/v1/streaming?" + query.Encode()
}

// A server's read and write timeouts do not end a stream (net/http
// clears them on the upgrade's hijack): Herald's server has them (30 s,
// 60 s), here shortened.
func TestStreamingOutlivesServerTimeouts(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write")
	timed := httptest.NewUnstartedServer(s.Config.Handler)
	timed.Config.ReadTimeout, timed.Config.WriteTimeout = 100*time.Millisecond, 100*time.Millisecond
	timed.Start()
	t.Cleanup(timed.Close)
	s2 := *s
	s2.Server = timed
	st := s2.openStream(t, url.Values{"stream": {"user"}, "access_token": {alice}}, "")
	time.Sleep(300 * time.Millisecond)
	post := s.postStatus(t, alice, url.Values{"status": {"still there"}})
	f := st.await(t, "update after the timeouts", func(f frame) bool { return f.Event == "update" })
	if payload(t, f)["id"] != post["id"] {
		t.Fatalf("update %+v", f)
	}
}

// openStream dials the streaming API with query and, when proto is set,
// the token as Sec-WebSocket-Protocol.
func (s *server) openStream(t *testing.T, query url.Values, proto string) *wsStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var opts websocket.DialOptions
	if proto != "" {
		opts.Subprotocols = []string{proto}
	}
	c, resp, err := websocket.Dial(ctx, s.wsURL(query), &opts)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		t.Fatalf("dial %v: %d %v", query, status, err)
	}
	if proto != "" && c.Subprotocol() != proto {
		t.Fatalf("subprotocol %q not echoed", c.Subprotocol())
	}
	st := &wsStream{s: s, c: c, frames: make(chan frame, 64)}
	go func() {
		defer close(st.frames)
		for {
			_, b, err := c.Read(context.Background())
			if err != nil {
				st.err = err
				return
			}
			var f frame
			if err := json.Unmarshal(b, &f); err != nil {
				f.Error = "not JSON: " + string(b)
			}
			st.frames <- f
		}
	}()
	t.Cleanup(func() { _ = c.CloseNow() })
	return st
}

// await lets the stream poll (the clock moved a poll interval each time
// the connection waits on it) until a frame matches; frames before it
// are passed over.
func (st *wsStream) await(t *testing.T, what string, match func(frame) bool) frame {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if st.s.clock.BlockUntil(ctx, 1) {
			st.s.clock.Advance(2 * time.Second)
		}
		cancel()
		select {
		case f, ok := <-st.frames:
			if !ok {
				t.Fatalf("stream closed awaiting %s", what)
			}
			if match(f) {
				return f
			}
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no %s", what)
		}
	}
}

func payload(t *testing.T, f frame) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(f.Payload), &m); err != nil {
		t.Fatalf("payload of %s is not an entity: %v %q", f.Event, err, f.Payload)
	}
	return m
}

func isStream(f frame, want ...string) bool {
	return strings.Join(f.Stream, " ") == strings.Join(want, " ")
}

// The user stream sends the persona's home updates, its notifications
// and deletes, written to the stores after it opened, and nothing of
// another persona's.
func TestStreamingUser(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write follow")
	work := s.login(t, "alice", "alice_work", "read")
	st := s.openStream(t, url.Values{"stream": {"user"}, "access_token": {alice}}, "")
	other := s.openStream(t, url.Values{"stream": {"user"}, "access_token": {work}}, "")

	post := s.postStatus(t, alice, url.Values{"status": {"hello stream"}})
	f := st.await(t, "home update", func(f frame) bool { return f.Event == "update" })
	if p := payload(t, f); !isStream(f, "user") || p["id"] != post["id"] || !strings.Contains(p["content"].(string), "hello stream") {
		t.Fatalf("update %+v", f)
	}

	s.deliver(t, remoteBob, mentioning(remoteBob+"/statuses/1", remoteBob, "https://local.example/users/alice"))
	f = st.await(t, "notification", func(f frame) bool { return f.Event == "notification" })
	if n := payload(t, f); !isStream(f, "user") || n["type"] != "mention" || n["account"].(map[string]any)["acct"] != "bob@remote.example" {
		t.Fatalf("notification %+v", f)
	}

	if r := s.do(t, http.MethodPut, "/api/v1/statuses/"+post["id"].(string), alice, url.Values{"status": {"hello again"}}); r.status != http.StatusOK {
		t.Fatalf("edit: %d %s", r.status, r.body)
	}
	f = st.await(t, "edit", func(f frame) bool { return f.Event == "status.update" })
	if p := payload(t, f); p["id"] != post["id"] || !strings.Contains(p["content"].(string), "hello again") {
		t.Fatalf("status.update %+v", f)
	}

	if r := s.do(t, http.MethodDelete, "/api/v1/statuses/"+post["id"].(string), alice, nil); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	f = st.await(t, "delete", func(f frame) bool { return f.Event == "delete" })
	if f.Payload != post["id"] {
		t.Fatalf("delete %+v, want %s", f, post["id"])
	}

	// alice_work's stream polled all along and was told nothing.
	select {
	case f, ok := <-other.frames:
		if ok {
			t.Fatalf("another persona's stream got %+v", f)
		}
	default:
	}
}

// Streams are refused before the upgrade without a token, with a bad
// one, for a scope the token lacks and for an unknown stream.
func TestStreamingRefused(t *testing.T) {
	t.Parallel()
	s := setup(t)
	statuses := s.login(t, "alice", "alice", "read:statuses")
	notes := s.login(t, "alice", "alice", "read:notifications")
	for _, tt := range []struct {
		name  string
		query url.Values
		want  int
	}{
		{"no token", url.Values{"stream": {"user"}}, http.StatusUnauthorized},
		{"unknown token", url.Values{"stream": {"user"}, "access_token": {"nope"}}, http.StatusUnauthorized},
		{"user without read:statuses", url.Values{"stream": {"user"}, "access_token": {notes}}, http.StatusForbidden},
		{"public without read:statuses", url.Values{"stream": {"public"}, "access_token": {notes}}, http.StatusForbidden},
		{"notifications without read:notifications", url.Values{"stream": {"user:notification"}, "access_token": {statuses}}, http.StatusForbidden},
		{"unknown stream", url.Values{"stream": {"list"}, "access_token": {statuses}}, http.StatusBadRequest},
		{"hashtag without tag", url.Values{"stream": {"hashtag"}, "access_token": {statuses}}, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, s.wsURL(tt.query), nil)
			if err == nil {
				_ = c.CloseNow()
				t.Fatal("upgraded")
			}
			if resp == nil || resp.StatusCode != tt.want {
				t.Fatalf("answer %v, want %d (%v)", resp, tt.want, err)
			}
		})
	}
	// read:notifications alone streams the notifications.
	s.openStream(t, url.Values{"stream": {"user:notification"}, "access_token": {notes}}, "")

	if r := s.do(t, http.MethodGet, "/api/v1/streaming/health", "", nil); r.status != http.StatusOK || string(r.body) != "OK" {
		t.Fatalf("health: %d %q", r.status, r.body)
	}
}

// A client that puts its token in Sec-WebSocket-Protocol subscribes by
// messages: a hashtag and the local timeline, each update framed with
// its stream; a refused subscription is an error frame on the same
// socket.
func TestStreamingSubscribe(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write")
	bob := s.login(t, "bob", "bob", "read")
	st := s.openStream(t, url.Values{}, bob)
	ctx := context.Background()
	for _, msg := range []string{`{"type":"subscribe","stream":"hashtag","tag":"Fedi"}`, `{"type":"subscribe","stream":"public:local"}`,
		`{"type":"subscribe","stream":"direct"}`} {
		if err := st.c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	f := st.await(t, "error frame", func(f frame) bool { return f.Error != "" })
	if f.Status != http.StatusBadRequest || !strings.Contains(f.Error, "direct") {
		t.Fatalf("error frame %+v", f)
	}
	// The subscriptions are read in order: both are in place now.
	post := s.postStatus(t, alice, url.Values{"status": {"about #fedi"}})
	got := map[string]bool{}
	for len(got) < 2 {
		f := st.await(t, "updates", func(f frame) bool { return f.Event == "update" })
		if payload(t, f)["id"] != post["id"] {
			t.Fatalf("update %+v", f)
		}
		got[strings.Join(f.Stream, " ")] = true
	}
	if !got["hashtag fedi"] || !got["public:local"] {
		t.Fatalf("streams %v", got)
	}

	// Unsubscribed, the local timeline is no longer sent. Messages are
	// read in order, so the unsubscription is in place once the refused
	// message sent after it is answered; a refused message after the next
	// post is answered after that post's frames.
	refused := func() {
		t.Helper()
		if err := st.c.Write(ctx, websocket.MessageText, []byte(`{"type":"bogus"}`)); err != nil {
			t.Fatal(err)
		}
		st.await(t, "error frame", func(f frame) bool {
			if isStream(f, "public:local") {
				t.Fatalf("unsubscribed stream sent %+v", f)
			}
			return f.Error != ""
		})
	}
	if err := st.c.Write(ctx, websocket.MessageText, []byte(`{"type":"unsubscribe","stream":"public:local"}`)); err != nil {
		t.Fatal(err)
	}
	refused()
	second := s.postStatus(t, alice, url.Values{"status": {"#fedi again"}})
	st.await(t, "hashtag update", func(f frame) bool {
		if isStream(f, "public:local") {
			t.Fatalf("unsubscribed stream sent %+v", f)
		}
		return f.Event == "update" && payload(t, f)["id"] == second["id"]
	})
	refused()
}

// One token holds at most four connections at once.
func TestStreamingConnectionCap(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read")
	q := url.Values{"stream": {"public"}, "access_token": {alice}}
	for range 4 {
		s.openStream(t, q, "")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, resp, err := websocket.Dial(ctx, s.wsURL(q), nil)
	if err == nil {
		_ = c.CloseNow()
		t.Fatal("a fifth connection was upgraded")
	}
	if resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("fifth: %v %v", resp, err)
	}
	// Another token is not held back by alice's.
	s.openStream(t, url.Values{"stream": {"public"}, "access_token": {s.login(t, "bob", "bob", "read")}}, "")
}

// A token revoked while it streams ends its connection at the next poll.
func TestStreamingRevoked(t *testing.T) {
	t.Parallel()
	s := setup(t)
	a := s.registerApp(t, "read")
	code := s.authorize(t, a, "alice", "alice", "read")
	r := s.do(t, http.MethodPost, "/oauth/token", "", url.Values{"grant_type": {"authorization_code"}, "client_id": {a.id},
		"client_secret": {a.secret}, "code": {code}, "redirect_uri": {callback}, "code_verifier": {pkceVerifier}})
	if r.status != http.StatusOK {
		t.Fatalf("token: %d %s", r.status, r.body)
	}
	token := r.object(t)["access_token"].(string)
	st := s.openStream(t, url.Values{"stream": {"user"}, "access_token": {token}}, "")
	if r := s.do(t, http.MethodPost, "/oauth/revoke", "", url.Values{"client_id": {a.id}, "client_secret": {a.secret}, "token": {token}}); r.status != http.StatusOK {
		t.Fatalf("revoke: %d %s", r.status, r.body)
	}
	deadline := time.After(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		if s.clock.BlockUntil(ctx, 1) {
			s.clock.Advance(2 * time.Second)
		}
		cancel()
		select {
		case f, ok := <-st.frames:
			if ok {
				t.Fatalf("frame %+v", f)
			}
			if got := websocket.CloseStatus(st.err); got != websocket.StatusPolicyViolation {
				t.Fatalf("closed with %v (%v), want policy violation", got, st.err)
			}
			return
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatal("the stream of a revoked token stayed open")
		}
	}
}

// A delete in a full page tells the delete, and the older status that
// comes back into the page is not sent again as new.
func TestStreamingDeleteInFullPage(t *testing.T) {
	t.Parallel()
	s := setup(t)
	alice := s.login(t, "alice", "alice", "read write")
	var ids []string
	for i := range 21 {
		ids = append(ids, s.postStatus(t, alice, url.Values{"status": {fmt.Sprint("post ", i)}})["id"].(string))
	}
	st := s.openStream(t, url.Values{"stream": {"public:local"}, "access_token": {alice}}, "")
	newest := ids[len(ids)-1]
	if r := s.do(t, http.MethodDelete, "/api/v1/statuses/"+newest, alice, nil); r.status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	st.await(t, "delete", func(f frame) bool {
		if f.Event == "update" {
			t.Fatalf("sent again: %s", f.Payload)
		}
		return f.Event == "delete" && f.Payload == newest
	})
	if err := st.c.Write(context.Background(), websocket.MessageText, []byte(`{"type":"bogus"}`)); err != nil {
		t.Fatal(err)
	}
	st.await(t, "error frame", func(f frame) bool {
		if f.Event == "update" {
			t.Fatalf("sent again: %s", f.Payload)
		}
		return f.Error != ""
	})
}
