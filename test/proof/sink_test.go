package proof_test

import (
	"encoding/json"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// userAgentPrefix is how the worker names itself (worker.UserAgentPrefix).
const userAgentPrefix = "herald-proof/"

// sink is the fake remote world: hosts loopback HTTP listeners (each one a
// remote host: 127.0.0.1 with its own port), one inbox each. It counts every
// delivery by activity id and which process sent it, and tracks how many
// requests run at once per (process, host) and per host.
type sink struct {
	inboxes []string
	delay   time.Duration // how long an inbox takes to answer

	mu        sync.Mutex
	byID      map[string]*received
	total     int
	perProc   map[string]int
	cur, max  map[procHost]int
	hostCur   map[string]int
	hostMax   map[string]int
	bad       []string
	holdProc  string // requests of this process are held until release
	held      int
	release   chan struct{}
	lastAt    time.Time
	arrivals  []arrival
	keepTimes bool
}

type received struct {
	count int
	procs []string // who sent it, in order
}

type procHost struct{ proc, host string }

type arrival struct {
	at   time.Time
	proc string
}

func newSink(t *testing.T, hosts int, delay time.Duration) *sink {
	t.Helper()
	s := &sink{
		delay: delay, byID: map[string]*received{}, perProc: map[string]int{},
		cur: map[procHost]int{}, max: map[procHost]int{}, hostCur: map[string]int{}, hostMax: map[string]int{},
		release: make(chan struct{}),
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	for range hosts {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("listen: %v", err)
		}
		s.inboxes = append(s.inboxes, "http://"+ln.Addr().String()+"/inbox")
		go func() { _ = srv.Serve(ln) }()
	}
	t.Cleanup(func() {
		s.unhold()
		_ = srv.Close()
	})
	return s
}

func (s *sink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	var act struct {
		ID string `json:"id"`
	}
	if err == nil {
		err = json.Unmarshal(body, &act)
	}
	proc, fromWorker := strings.CutPrefix(r.UserAgent(), userAgentPrefix)
	problem := ""
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/inbox":
		problem = r.Method + " " + r.URL.Path
	case err != nil || act.ID == "":
		problem = "body without an activity id"
	case !fromWorker:
		problem = "unknown User-Agent " + r.UserAgent()
	case r.Header.Get("Signature") == "" || r.Header.Get("Digest") == "":
		problem = "unsigned request"
	}
	key := procHost{proc, r.Host}
	s.mu.Lock()
	if problem != "" {
		s.bad = append(s.bad, problem)
		s.mu.Unlock()
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	rec := s.byID[act.ID]
	if rec == nil {
		rec = &received{}
		s.byID[act.ID] = rec
	}
	rec.count++
	rec.procs = append(rec.procs, proc)
	s.total++
	s.perProc[proc]++
	now := time.Now()
	s.lastAt = now
	if s.keepTimes {
		s.arrivals = append(s.arrivals, arrival{at: now, proc: proc})
	}
	s.cur[key]++
	s.max[key] = max(s.max[key], s.cur[key])
	s.hostCur[r.Host]++
	s.hostMax[r.Host] = max(s.hostMax[r.Host], s.hostCur[r.Host])
	hold := s.holdProc != "" && s.holdProc == proc
	if hold {
		s.held++
	}
	release := s.release
	s.mu.Unlock()

	if hold {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	} else {
		time.Sleep(s.delay)
	}

	s.mu.Lock()
	s.cur[key]--
	s.hostCur[r.Host]--
	s.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// hold makes the inboxes keep every request of proc (after counting it)
// until unhold: the process's deliveries are then in flight, the remote has
// them, and their jobs are not yet completed.
func (s *sink) hold(proc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdProc = proc
}

func (s *sink) unhold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.holdProc = ""
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

func (s *sink) heldCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held
}

func (s *sink) received() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// waitReceived waits until the inboxes have received want of the n jobs,
// failing when the deliveries stop (progressing).
func (s *sink) waitReceived(t *testing.T, want, n int) {
	t.Helper()
	if ok, got := progressing(s.received, func(got int) bool { return got >= want }); !ok {
		t.Fatalf("only %d of %d delivered, none in the last %s (or %s in all)", got, n, stall, proofCap)
	}
}

// tally is what the sink saw, for the checks.
type tally struct {
	total, distinct int
	redeliveries    int                 // sum over activities of (deliveries - 1)
	redelivered     map[string][]string // activity id → the processes that sent it
	perProc         map[string]int
	maxPerProcHost  int
	worstProcHost   procHost
	maxPerHost      int
	bad             []string
	lastAt          time.Time
	arrivals        []arrival
	deliveredByID   map[string]int
}

func (s *sink) tally() tally {
	s.mu.Lock()
	defer s.mu.Unlock()
	tl := tally{total: s.total, distinct: len(s.byID), redelivered: map[string][]string{},
		perProc: map[string]int{}, bad: append([]string(nil), s.bad...), lastAt: s.lastAt,
		arrivals: append([]arrival(nil), s.arrivals...), deliveredByID: map[string]int{}}
	for id, r := range s.byID {
		tl.deliveredByID[id] = r.count
		if r.count > 1 {
			tl.redeliveries += r.count - 1
			tl.redelivered[id] = append([]string(nil), r.procs...)
		}
	}
	for p, n := range s.perProc {
		tl.perProc[p] = n
	}
	for k, n := range s.max {
		if n > tl.maxPerProcHost {
			tl.maxPerProcHost, tl.worstProcHost = n, k
		}
	}
	for _, n := range s.hostMax {
		tl.maxPerHost = max(tl.maxPerHost, n)
	}
	return tl
}

// proxy is a TCP proxy between the workers and PostgreSQL that the test
// can cut: every connection through it is closed and new ones are refused
// (its port is closed) until it is restored on the same port. It stands
// for a database that restarts or refuses connections, without touching
// the PostgreSQL server other tests share.
type proxy struct {
	target string
	addr   string

	mu       sync.Mutex
	ln       net.Listener
	conns    map[net.Conn]struct{}
	accepted int
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := listenBelowEphemeral()
	if err != nil {
		t.Fatalf("proxy listen: %v", err)
	}
	p := &proxy{target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}}
	go p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

// listenBelowEphemeral listens on a loopback port below the kernel's
// ephemeral range. While the proxy is cut its port is closed; a port from
// that range could meanwhile become the local port of some outgoing
// connection (the workers' reconnect attempts among them), and listening on
// it again would fail.
func listenBelowEphemeral() (net.Listener, error) {
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				low = n
			}
		}
	}
	const from = 10000
	if low <= from+100 {
		return net.Listen("tcp", "127.0.0.1:0")
	}
	var err error
	for range 50 {
		var ln net.Listener
		ln, err = net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(from+mrand.IntN(low-from))))
		if err == nil {
			return ln, nil
		}
	}
	return nil, err
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *proxy) pipe(c net.Conn) {
	d, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	if p.ln == nil { // cut meanwhile
		p.mu.Unlock()
		_ = c.Close()
		_ = d.Close()
		return
	}
	p.conns[c], p.conns[d] = struct{}{}, struct{}{}
	p.accepted++
	p.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(d, c); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, d); done <- struct{}{} }()
	<-done
	_ = c.Close()
	_ = d.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, d)
	p.mu.Unlock()
}

// cut closes the port and every connection: the database is gone.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		_ = p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		_ = c.Close()
	}
}

// restore listens on the same port again: the database is back.
func (p *proxy) restore(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}

func (p *proxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}
