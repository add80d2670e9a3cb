package main

import (
	"bytes"
	"context"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/domain"
)

// The soak's fediverse (issue 36): soakServers loopback servers of
// soakActorsPer followers each; the first half give their actors a shared
// inbox (one delivery per post), the others only personal inboxes (one
// per follower). So a post goes to 50 + 50×20 = 1,050 inboxes.
const (
	soakServers   = 100
	soakActorsPer = 20
)

// soakKind is how a server of the soak behaves once its faults are on.
type soakKind int

const (
	soakHealthy soakKind = iota
	soakSlow             // answers after 2–5 s (at once in the control)
	soakDead             // accepts, never answers
	soakRefused          // its port refuses connections
)

func (k soakKind) String() string {
	return [...]string{"healthy", "slow", "dead", "refused"}[k]
}

// soakFaulty places the faulty servers: which servers (by index; 0–49
// shared inbox, 50–99 personal inboxes) are slow, dead and refusing. Six
// personal and four shared: 6×20 + 4 = 124 of the 1,050 inboxes, so 926
// healthy ones a post, 185.2 a second at a post every 5 s — the issue's
// demand.
var soakFaulty = map[int]soakKind{
	7: soakSlow, 23: soakSlow, 55: soakSlow, 68: soakSlow, 81: soakSlow,
	12: soakDead, 61: soakDead, 90: soakDead,
	31: soakRefused, 74: soakRefused,
}

// soakServer is one fake remote server.
type soakServer struct {
	idx    int
	kind   soakKind
	shared bool
	host   string // 127.0.0.1:port, the same for the whole scenario
	srv    *http.Server
	ln     net.Listener
	docs   [][]byte // actor documents
	// inboxes maps an inbox path to its index in soakFediverse.inboxes.
	inboxes map[string]int
}

// soakInbox is one inbox a post is delivered to.
type soakInbox struct {
	server int
	url    string
}

// soakFediverse is every server, kept for the whole scenario (the signed
// requests name their actors' ports), with the counting of one run.
type soakFediverse struct {
	servers []*soakServer
	inboxes []soakInbox // a post's delivery list, in server order
	key     *rsa.PrivateKey
	pem     string

	faults atomic.Bool // faulty servers misbehave (the load phase)
	slowOn atomic.Bool // slow servers are slow (false: the control)
	stop   chan struct{}

	mu  sync.Mutex
	run *soakCount
}

// soakCount is what one run's servers received.
type soakCount struct {
	start time.Time
	// got counts deliveries of post p to inbox i under key p<<32|i.
	got  map[uint64]int
	dups int
	// healthyAt[s] counts first deliveries to healthy inboxes in second s
	// since start; slowAt the same for the slow servers' inboxes.
	healthyAt, slowAt []int
	lastHealthy       time.Time
	healthy, slow     int
	faulty            int // requests that reached a dead server, or a slow one (answered or not)
	other             int // deliveries of anything else (Accepts)
}

// soakKeyBits is the size of the fake actors' key: 1,024 bits signs five
// times faster than 2,048, so the scenario's tens of thousands of signed
// requests are ready in seconds, not minutes, on a busy machine; verifying
// either costs Herald tens of microseconds.
const soakKeyBits = 1024

func newSoakFediverse() (*soakFediverse, error) {
	kp, err := security.RSAKeys{Bits: soakKeyBits}.GenerateKeyPair()
	if err != nil {
		return nil, err
	}
	key, err := domain.ParsePrivateKey(kp.PrivatePEM)
	if err != nil {
		return nil, err
	}
	f := &soakFediverse{key: key, pem: kp.PublicPEM, stop: make(chan struct{})}
	for i := 0; i < soakServers; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			f.close()
			return nil, err
		}
		s := &soakServer{idx: i, kind: soakFaulty[i], shared: i < soakServers/2, host: ln.Addr().String(), ln: ln, inboxes: map[string]int{}}
		if s.shared {
			s.inboxes["/inbox"] = len(f.inboxes)
			f.inboxes = append(f.inboxes, soakInbox{server: i, url: "http://" + s.host + "/inbox"})
		}
		for a := 0; a < soakActorsPer; a++ {
			actor := s.actor(a)
			doc := map[string]any{
				"@context":          []string{"https://www.w3.org/ns/activitystreams", "https://w3id.org/security/v1"},
				"id":                actor,
				"type":              "Person",
				"preferredUsername": fmt.Sprintf("a%d", a),
				"inbox":             actor + "/inbox",
				"outbox":            actor + "/outbox",
				"followers":         actor + "/followers",
				"following":         actor + "/following",
				"publicKey":         map[string]string{"id": actor + "#main-key", "owner": actor, "publicKeyPem": f.pem},
			}
			if s.shared {
				doc["endpoints"] = map[string]string{"sharedInbox": "http://" + s.host + "/inbox"}
			} else {
				path := fmt.Sprintf("/users/a%d/inbox", a)
				s.inboxes[path] = len(f.inboxes)
				f.inboxes = append(f.inboxes, soakInbox{server: i, url: "http://" + s.host + path})
			}
			b, err := json.Marshal(doc)
			if err != nil {
				f.close()
				return nil, err
			}
			s.docs = append(s.docs, b)
		}
		f.servers = append(f.servers, s)
		f.serve(s)
	}
	return f, nil
}

func (s *soakServer) actor(a int) string { return fmt.Sprintf("http://%s/users/a%d", s.host, a) }

func (f *soakFediverse) serve(s *soakServer) {
	s.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.handle(s, w, r) }), ReadHeaderTimeout: 5 * time.Second}
	go func(srv *http.Server, ln net.Listener) { _ = srv.Serve(ln) }(s.srv, s.ln)
}

// setFaults turns the faults on (the load) or off (set-up, between runs):
// a refusing server's listener is closed, then opened again on its port.
func (f *soakFediverse) setFaults(on, slow bool) error {
	f.slowOn.Store(slow)
	f.faults.Store(on)
	for _, s := range f.servers {
		if s.kind != soakRefused {
			continue
		}
		if on && s.srv != nil {
			_ = s.srv.Close() // closes the listener: connections are refused
			s.srv = nil
		}
		if !on && s.srv == nil {
			ln, err := net.Listen("tcp", s.host)
			if err != nil {
				return fmt.Errorf("listen again on %s: %w", s.host, err)
			}
			s.ln = ln
			f.serve(s)
		}
	}
	return nil
}

func (f *soakFediverse) close() {
	select {
	case <-f.stop:
	default:
		close(f.stop)
	}
	for _, s := range f.servers {
		if s.srv != nil {
			_ = s.srv.Close()
		}
	}
}

// begin starts counting a run's deliveries, at start.
func (f *soakFediverse) begin(start time.Time, seconds int) *soakCount {
	c := &soakCount{start: start, got: map[uint64]int{}, healthyAt: make([]int, seconds), slowAt: make([]int, seconds)}
	f.mu.Lock()
	f.run = c
	f.mu.Unlock()
	return c
}

// snapshot reads the counts under the lock.
func (f *soakFediverse) snapshot(read func(c *soakCount)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.run != nil {
		read(f.run)
	}
}

// postMarker starts the content of soak post n; a delivery whose body
// holds it is a delivery of that post.
const postMarker = "soakpost-"

func soakPostContent(n int) string {
	return fmt.Sprintf("%s%d the soak's post number %d", postMarker, n, n)
}

// postOf reads the post number from a delivered body, or -1.
func postOf(body []byte) int {
	i := bytes.Index(body, []byte(postMarker))
	if i < 0 {
		return -1
	}
	rest := body[i+len(postMarker):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	n, err := strconv.Atoi(string(rest[:j]))
	if err != nil {
		return -1
	}
	return n
}

func (f *soakFediverse) handle(s *soakServer, w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		var a int
		if _, err := fmt.Sscanf(r.URL.Path, "/users/a%d", &a); err != nil || a < 0 || a >= len(s.docs) || r.URL.Path != fmt.Sprintf("/users/a%d", a) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/activity+json")
		_, _ = w.Write(s.docs[a])
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/inbox") {
		http.NotFound(w, r)
		return
	}
	// A personal inbox of a server with a shared one takes what is sent
	// to one actor (an Accept), not posts: it is in no delivery list.
	inbox, listed := s.inboxes[r.URL.Path]
	faults := f.faults.Load()
	switch {
	case faults && s.kind == soakDead:
		f.count(func(c *soakCount) { c.faulty++ })
		select { // never answers; Herald's client gives up
		case <-r.Context().Done():
		case <-f.stop:
		}
		return
	case faults && s.kind == soakSlow && f.slowOn.Load():
		f.count(func(c *soakCount) { c.faulty++ })
		wait := 2*time.Second + rand.N(3*time.Second)
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		case <-f.stop:
			return
		}
	default:
		// A prompt server: 5–50 ms, as the fan-out scenario's.
		select {
		case <-time.After(5*time.Millisecond + rand.N(45*time.Millisecond)):
		case <-f.stop:
			return
		}
	}
	post := postOf(body)
	f.count(func(c *soakCount) {
		if post < 0 || !listed {
			c.other++
			return
		}
		k := uint64(post)<<32 | uint64(inbox)
		c.got[k]++
		if c.got[k] > 1 {
			c.dups++
			return
		}
		now := time.Now()
		sec := int(now.Sub(c.start) / time.Second)
		switch s.kind {
		case soakHealthy:
			c.healthy++
			c.lastHealthy = now
			if sec >= 0 && sec < len(c.healthyAt) {
				c.healthyAt[sec]++
			}
		case soakSlow:
			c.slow++
			if sec >= 0 && sec < len(c.slowAt) {
				c.slowAt[sec]++
			}
		}
	})
	w.WriteHeader(http.StatusAccepted)
}

func (f *soakFediverse) count(fn func(c *soakCount)) {
	f.mu.Lock()
	if f.run != nil {
		fn(f.run)
	}
	f.mu.Unlock()
}

// healthyInboxes is the number of a post's inboxes on healthy servers.
func (f *soakFediverse) inboxesOf(kind soakKind) int {
	n := 0
	for _, in := range f.inboxes {
		if f.servers[in.server].kind == kind {
			n++
		}
	}
	return n
}

// actors lists every actor URI, with the kind of its server.
func (f *soakFediverse) actors() (uris []string, kinds []soakKind) {
	for _, s := range f.servers {
		for a := range s.docs {
			uris = append(uris, s.actor(a))
			kinds = append(kinds, s.kind)
		}
	}
	return uris, kinds
}

// follow is the signed Follow of Herald's bench persona by actor.
func (f *soakFediverse) follow(actor string) (signedPost, error) {
	now := time.Now().UTC()
	body, err := json.Marshal(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       actor + "#follow-soak",
		"type":     "Follow",
		"actor":    actor,
		"object":   inboxPersonaURI(),
	})
	if err != nil {
		return signedPost{}, err
	}
	return signInboxPost(actor+"#main-key", f.key, body, now)
}

// like is the signed Like of object by actor.
func (f *soakFediverse) like(actor, object string, n int) (signedPost, error) {
	now := time.Now().UTC()
	body, err := json.Marshal(map[string]any{
		"@context": "https://www.w3.org/ns/activitystreams",
		"id":       fmt.Sprintf("%s#like-%d", actor, n),
		"type":     "Like",
		"actor":    actor,
		"object":   object,
	})
	if err != nil {
		return signedPost{}, err
	}
	return signInboxPost(actor+"#main-key", f.key, body, now)
}

// creates signs n Create{Note} activities of the actors of healthy
// servers, in turn, on every core.
func (f *soakFediverse) creates(n int) ([]signedPost, error) {
	uris, kinds := f.actors()
	var healthy []string
	for i, u := range uris {
		if kinds[i] == soakHealthy {
			healthy = append(healthy, u)
		}
	}
	if len(healthy) == 0 {
		return nil, errors.New("no healthy actor")
	}
	posts := make([]signedPost, n)
	var firstErr error
	var once sync.Once
	parallel(n, func(i int) {
		actor := healthy[i%len(healthy)]
		now := time.Now().UTC()
		body, err := createNote(actor, fmt.Sprintf("%s/statuses/soak-%d", actor, i), i, now)
		if err == nil {
			posts[i], err = signInboxPost(actor+"#main-key", f.key, body, now)
		}
		if err != nil {
			once.Do(func() { firstErr = err })
		}
	})
	return posts, firstErr
}

// sendSigned POSTs one signed activity to Herald's shared inbox at base
// and returns the status (0 with the error when none came back).
func sendSigned(ctx context.Context, client *http.Client, base string, p signedPost) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/inbox", bytes.NewReader(p.body))
	if err != nil {
		return 0, err
	}
	req.Header = p.header.Clone()
	req.Host = inboxDomain
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	return resp.StatusCode, nil
}
