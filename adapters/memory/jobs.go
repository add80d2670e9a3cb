package memory

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

var (
	_ ports.JobStore = (*JobStore)(nil)
	_ ports.JobAdmin = (*JobStore)(nil)
)

// JobStore is the in-memory queue. Queued jobs sit in one min-heap per host,
// ordered by (RunAt, insertion); the hosts sit in a heap ordered by their
// earliest job. A lease pops hosts until it finds one that is not skipped,
// so its cost grows with the log of the queue and with the number of skipped
// hosts (at most the per-host-capped hosts in flight), not with the queue.
// Each job is a compact entry (jobentry.go).
type JobStore struct {
	mu   sync.Mutex
	seq  uint64
	jobs map[string]*entry
	// byKey finds a job by its dedupe key when that is the derived one
	// (entry.givenKey), indexed by 8 of its bytes (a third of the room of
	// the whole key); a key whose 8 bytes are taken goes to collided, and
	// a key as given to givenKeys.
	byKey     map[uint64]*entry
	collided  map[[32]byte]*entry
	givenKeys map[string]*entry
	// hosts holds every host a stored job has, queued or not: its queue,
	// its count of leases, and the one copy of its name.
	hosts   map[string]*hostQueue
	ready   readyHeap
	leased  map[*entry]struct{}
	byState []int // by jobState
	acts    map[activityKey]*activity
	// bodies holds each activity body once, with the number of jobs that
	// refer to it: the last job purged takes its body along.
	bodies map[string]*body
}

type body struct {
	data []byte
	refs int
}

// NewJobStore returns an empty queue.
func NewJobStore() *JobStore {
	return &JobStore{
		jobs:      make(map[string]*entry),
		byKey:     make(map[uint64]*entry),
		collided:  make(map[[32]byte]*entry),
		givenKeys: make(map[string]*entry),
		hosts:     make(map[string]*hostQueue),
		leased:    make(map[*entry]struct{}),
		byState:   make([]int, len(domain.JobStates())),
		acts:      make(map[activityKey]*activity),
		bodies:    make(map[string]*body),
	}
}

// Enqueue implements ports.JobStore.
func (s *JobStore) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	prep, bodies := prepare(jobs)
	s.mu.Lock()
	defer s.mu.Unlock()
	// All or nothing: check every id before inserting any.
	ids := make(map[string]bool, len(jobs))
	for i, j := range jobs {
		if s.byDedupeKey(&prep[i].key) != nil {
			continue
		}
		if _, dup := s.jobs[j.ID]; dup || ids[j.ID] {
			return 0, fmt.Errorf("%w: job id %q", domain.ErrAlreadyExists, j.ID)
		}
		ids[j.ID] = true
	}
	n := 0
	var act *activity // the last job's: a fan-out's jobs come in a run
	for i := range jobs {
		j, p := &jobs[i], &prep[i]
		if s.byDedupeKey(&p.key) != nil {
			continue
		}
		s.addBodyRef(p.bodyID, bodies)
		act = s.addActivity(activityKey{id: j.ActivityID, sender: j.SenderID, keyID: j.KeyID, bodyID: p.bodyID}, act)
		hq := s.addHost(j.Host)
		s.seq++
		e := &entry{
			id:         j.ID,
			act:        act,
			hq:         hq,
			seq:        s.seq,
			runAt:      instantOf(j.RunAt),
			createdAt:  instantOf(j.CreatedAt),
			finishedAt: instantOf(j.FinishedAt),
			attempts:   attemptsOf(j.Attempts),
			state:      stateOf(j.State),
		}
		e.inbox, e.inboxScheme = compactInbox(j.Inbox, hq.host)
		if !p.derived {
			e.givenKey = true
			e.moreFields().key = p.key.text
		}
		e.setLease(j.LeaseOwner, j.LeaseToken, instantOf(j.LeaseUntil))
		e.setLastError(j.LastError)
		s.jobs[e.id] = e
		s.addDedupeKey(e, p)
		s.byState[e.state]++
		switch j.State {
		case domain.JobQueued:
			s.push(e)
		case domain.JobLeased:
			s.addLeased(e)
		}
		n++
	}
	return n, nil
}

// prepared is what Enqueue works out of a job before it takes the mutex.
type prepared struct {
	key     dedupeKey
	derived bool // key is the one domain.NewJob derives
	bodyID  string
}

// prepare decodes each job's dedupe key (checked by ports.CheckJobs),
// tells whether it is the derived one, and gives its body id as
// ports.SplitBodies does (the content address of its payload, hashed once
// per run of equal payloads, or the BodyID it came with when it has none),
// with the batch's bodies by id, without SplitBodies' copy of the batch.
func prepare(jobs []domain.Job) ([]prepared, map[string][]byte) {
	prep := make([]prepared, len(jobs))
	bodies := make(map[string][]byte)
	var last []byte
	lastID := ""
	for i, j := range jobs {
		prep[i].key = parseDedupeKey(j.DedupeKey)
		prep[i].derived = derivedKey(j.ActivityID, wholeInbox, "", j.Inbox) == prep[i].key.sum
		if len(j.Payload) == 0 {
			prep[i].bodyID = j.BodyID
			continue
		}
		if lastID == "" || !bytes.Equal(last, j.Payload) {
			last, lastID = j.Payload, domain.BodyOf(j.Payload)
			if _, ok := bodies[lastID]; !ok {
				bodies[lastID] = j.Payload
			}
		}
		prep[i].bodyID = lastID
	}
	return prep, bodies
}

// LeaseBatch implements ports.JobStore. The per-host cap is counted from
// the leased jobs themselves (hostQueue.leased), under the mutex, so it
// holds for every caller of this store: one memory store is one process.
func (s *JobStore) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	req, err := ports.NormalizeLease(req)
	if err != nil {
		return nil, err
	}
	now, until := instantOf(req.Now), instantOf(req.Until)
	s.mu.Lock()
	defer s.mu.Unlock()
	// Hosts passed over (skipped, or at their cap) leave the ready heap for
	// the rest of the call, so the loop stops at the first due job it may
	// take, and go back at the end.
	var aside []*hostQueue
	defer func() {
		for _, hq := range aside {
			heap.Push(&s.ready, hq)
		}
	}()
	var out []domain.Job
	for len(out) < req.Limit && s.ready.Len() > 0 {
		hq := s.ready[0]
		head := hq.items[0]
		if head.runAt > now {
			break // every other host's earliest job is later still
		}
		if slices.Contains(req.SkipHosts, hq.host) || hq.leased >= req.PerHost {
			aside = append(aside, heap.Pop(&s.ready).(*hostQueue))
			continue
		}
		s.popHead(hq) // the host's next job, if any, takes its place in the heap
		s.setState(head, domain.JobLeased)
		head.setLease(req.Owner, req.Token, until)
		s.addLeased(head)
		out = append(out, s.copyOut(head))
	}
	return out, nil
}

// addBodyRef counts one more job of the body id, storing the body from the
// batch's bodies when the store has not got it. A reference to a body that
// is neither stored nor in the batch stays dangling: the job is handed out
// without a payload.
func (s *JobStore) addBodyRef(id string, batch map[string][]byte) {
	if id == "" {
		return
	}
	if b, ok := s.bodies[id]; ok {
		b.refs++
		return
	}
	if data, ok := batch[id]; ok {
		s.bodies[id] = &body{data: slices.Clone(data), refs: 1}
	}
}

// dropBodyRef counts one job of the body id fewer, deleting the body with
// its last job.
func (s *JobStore) dropBodyRef(id string) {
	if b, ok := s.bodies[id]; ok {
		if b.refs--; b.refs <= 0 {
			delete(s.bodies, id)
		}
	}
}

// addActivity counts one more job of the activity k, trying last first:
// the map lookup hashes four URLs.
func (s *JobStore) addActivity(k activityKey, last *activity) *activity {
	a := last
	if a == nil || a.activityKey != k {
		if a = s.acts[k]; a == nil {
			a = &activity{activityKey: k}
			s.acts[k] = a
		}
	}
	a.refs++
	return a
}

func (s *JobStore) dropActivity(a *activity) {
	if a.refs--; a.refs <= 0 {
		delete(s.acts, a.activityKey)
	}
}

// addHost counts one more job of the host and returns its record.
func (s *JobStore) addHost(host string) *hostQueue {
	hq, ok := s.hosts[host]
	if !ok {
		hq = &hostQueue{host: host, ridx: -1}
		s.hosts[host] = hq
	}
	hq.refs++
	return hq
}

func (s *JobStore) dropHost(hq *hostQueue) {
	if hq.refs--; hq.refs <= 0 {
		delete(s.hosts, hq.host)
	}
}

// byDedupeKey returns the job stored with the key k, if any. A derived key
// may be stored as given too (by a caller who set it on another job).
func (s *JobStore) byDedupeKey(k *dedupeKey) *entry {
	if e := s.byKey[short(&k.sum)]; e != nil && e.derivedKey() == k.sum {
		return e
	}
	if e := s.collided[k.sum]; e != nil {
		return e
	}
	return s.givenKeys[k.text]
}

func (s *JobStore) addDedupeKey(e *entry, p *prepared) {
	switch {
	case !p.derived:
		s.givenKeys[p.key.text] = e
	case s.byKey[short(&p.key.sum)] == nil:
		s.byKey[short(&p.key.sum)] = e
	default:
		s.collided[p.key.sum] = e
	}
}

func (s *JobStore) dropDedupeKey(e *entry) {
	if e.givenKey {
		delete(s.givenKeys, e.more.key)
		return
	}
	sum := e.derivedKey()
	if s.byKey[short(&sum)] == e {
		delete(s.byKey, short(&sum))
	} else {
		delete(s.collided, sum)
	}
}

func (s *JobStore) addLeased(e *entry) {
	s.leased[e] = struct{}{}
	e.hq.leased++
}

func (s *JobStore) dropLeased(e *entry) {
	delete(s.leased, e)
	e.hq.leased--
}

// held returns the entry if token holds its lease.
func (s *JobStore) held(id, token string) (*entry, error) {
	e, ok := s.jobs[id]
	if !ok || e.state != stateOf(domain.JobLeased) || e.leaseToken() != token || token == "" {
		return nil, fmt.Errorf("job %s: %w", id, domain.ErrLeaseLost)
	}
	return e, nil
}

func (s *JobStore) finish(e *entry, state domain.JobState, at time.Time) {
	s.dropLeased(e)
	s.setState(e, state)
	e.finishedAt = instantOf(at)
	e.clearLease()
}

// Settle implements ports.JobStore, the whole batch under one hold of the
// mutex.
func (s *JobStore) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	lost := make([]error, len(batch))
	for i, st := range batch {
		e, err := s.held(st.ID, st.Token)
		if err != nil {
			lost[i] = err
			continue
		}
		e.attempts = attemptsOf(st.Attempts)
		e.setLastError(st.LastError)
		if st.State == domain.JobQueued {
			s.requeue(e, instantOf(st.RunAt))
		} else {
			s.finish(e, st.State, st.FinishedAt)
		}
	}
	return lost, nil
}

func (s *JobStore) requeue(e *entry, runAt instant) {
	s.dropLeased(e)
	e.clearLease()
	s.setState(e, domain.JobQueued)
	e.runAt = runAt
	s.push(e)
}

// Reap implements ports.JobStore.
func (s *JobStore) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.ReapResult{}, err
	}
	at := instantOf(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	var r ports.ReapResult
	for e := range s.leased {
		if e.leaseUntil() >= at {
			continue
		}
		e.attempts = attemptsOf(int(e.attempts) + 1)
		e.setLastError("lease expired (worker died or stalled)")
		if int(e.attempts) >= maxAttempts {
			s.finish(e, domain.JobDead, now)
			r.Dead++
			continue
		}
		s.requeue(e, at)
		r.Requeued++
	}
	return r, nil
}

// Purge implements ports.JobStore.
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	before := instantOf(finishedBefore)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, e := range s.jobs {
		if e.state.domain().Finished() && e.finishedAt < before {
			delete(s.jobs, id)
			s.dropDedupeKey(e)
			s.dropBodyRef(e.act.bodyID)
			s.dropActivity(e.act)
			s.dropHost(e.hq)
			s.byState[e.state]--
			n++
		}
	}
	return n, nil
}

// DeferHost implements ports.JobStore.
func (s *JobStore) DeferHost(ctx context.Context, host string, until time.Time) (int, error) {
	to := instantOf(until)
	return s.moveHost(ctx, host, func(runAt instant) bool { return runAt < to }, to)
}

// ResumeHost implements ports.JobStore.
func (s *JobStore) ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error) {
	end, to := instantOf(until), instantOf(now)
	return s.moveHost(ctx, host, func(runAt instant) bool { return runAt > to && runAt <= end }, to)
}

func (s *JobStore) moveHost(ctx context.Context, host string, match func(instant) bool, to instant) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hq, ok := s.hosts[host]
	if !ok || hq.Len() == 0 {
		return 0, nil
	}
	n := 0
	for _, e := range hq.items {
		if match(e.runAt) {
			e.runAt = to
			n++
		}
	}
	if n > 0 {
		heap.Init(hq)
		heap.Fix(&s.ready, hq.ridx)
	}
	return n, nil
}

// Counts implements ports.JobAdmin.
func (s *JobStore) Counts(ctx context.Context) (map[domain.JobState]int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[domain.JobState]int, len(s.byState))
	for i, st := range domain.JobStates() {
		out[st] = s.byState[i]
	}
	return out, nil
}

// CountsOfBody implements ports.JobAdmin. It walks the whole queue: the
// memory store has no index by body, and an operator's look at a fan-out
// is rare next to leases.
func (s *JobStore) CountsOfBody(ctx context.Context, bodyID string) (map[domain.JobState]int, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := ports.StateCounts()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.jobs {
		if e.act.bodyID == bodyID && bodyID != "" {
			out[e.state.domain()]++
		}
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin.
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	st := stateOf(state)
	s.mu.Lock()
	counts := make(map[string]int)
	for _, e := range s.jobs {
		if e.state == st {
			counts[e.hq.host]++
		}
	}
	s.mu.Unlock()
	out := make([]ports.HostCount, 0, len(counts))
	for h, c := range counts {
		out = append(out, ports.HostCount{Host: h, State: state, Count: c})
	}
	slices.SortFunc(out, func(a, b ports.HostCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Host, b.Host))
	})
	return limitSlice(out, limit), nil
}

// Get implements ports.JobAdmin.
func (s *JobStore) Get(ctx context.Context, id string) (domain.Job, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.jobs[id]
	if !ok {
		return domain.Job{}, fmt.Errorf("job %s: %w", id, domain.ErrNotFound)
	}
	return s.copyOut(e), nil
}

// List implements ports.JobAdmin.
func (s *JobStore) List(ctx context.Context, f ports.JobFilter) ([]domain.Job, error) {
	st := stateOf(f.State)
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Job
	for _, e := range s.jobs {
		if (f.State == "" || e.state == st) && (f.Host == "" || e.hq.host == f.Host) && e.id > f.AfterID {
			out = append(out, s.copyOut(e))
		}
	}
	slices.SortFunc(out, func(a, b domain.Job) int { return cmp.Compare(a.ID, b.ID) })
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// RetryDead implements ports.JobAdmin.
func (s *JobStore) RetryDead(ctx context.Context, id, host string, now time.Time) (int, error) {
	at := instantOf(now)
	dead := stateOf(domain.JobDead)
	s.mu.Lock()
	defer s.mu.Unlock()
	revive := func(e *entry) {
		e.attempts = 0
		e.finishedAt = zeroInstant
		s.setState(e, domain.JobQueued)
		e.runAt = at
		s.push(e)
	}
	if id != "" {
		e, ok := s.jobs[id]
		if !ok || e.state != dead || (host != "" && e.hq.host != host) {
			return 0, nil
		}
		revive(e)
		return 1, nil
	}
	n := 0
	for _, e := range s.jobs {
		if e.state == dead && e.hq.host == host {
			revive(e)
			n++
		}
	}
	return n, nil
}

// EndDomainJobs implements ports.JobAdmin in one pass under the mutex: the
// hosts the domain covers (domain.DomainCovers, one call per host, not per
// job) give up their whole queue, which is exactly their queued jobs, and
// leave the ready heap. Their leased jobs are not in the queue, so they
// keep their leases and their hosts' counts of them; the host records
// stay with the dead jobs (RetryDead pushes them back, Purge lets them
// go).
func (s *JobStore) EndDomainJobs(ctx context.Context, d, reason string, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	at := instantOf(now)
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for host, hq := range s.hosts {
		if hq.Len() == 0 || !domain.DomainCovers(d, host) {
			continue
		}
		for _, e := range hq.items {
			s.setState(e, domain.JobDead)
			e.setLastError(reason)
			e.finishedAt = at
		}
		n += hq.Len()
		if hq.ridx >= 0 {
			heap.Remove(&s.ready, hq.ridx)
		}
		hq.items = nil
	}
	return n, nil
}

func (s *JobStore) copyOut(e *entry) domain.Job {
	j := e.toJob()
	if b, ok := s.bodies[j.BodyID]; ok {
		j.Payload = slices.Clone(b.data)
	}
	return j
}

func (s *JobStore) setState(e *entry, st domain.JobState) {
	s.byState[e.state]--
	e.state = stateOf(st)
	s.byState[e.state]++
}

// push adds a queued entry to its host's heap.
func (s *JobStore) push(e *entry) {
	hq := e.hq
	heap.Push(hq, e)
	if hq.ridx < 0 {
		heap.Push(&s.ready, hq)
	} else {
		heap.Fix(&s.ready, hq.ridx)
	}
}

// popHead takes the earliest entry off hq, the first of the ready heap.
func (s *JobStore) popHead(hq *hostQueue) {
	heap.Pop(hq)
	switch {
	case hq.Len() == 0:
		if hq.ridx >= 0 {
			heap.Remove(&s.ready, hq.ridx)
		}
		hq.items = nil // an idle host keeps no room for the queue it had
	case hq.ridx >= 0:
		heap.Fix(&s.ready, hq.ridx)
	}
}

func attemptsOf(n int) int32 {
	return int32(min(max(n, math.MinInt32), math.MaxInt32))
}

// hostQueue is one host's record: a min-heap of its queued entries by
// (runAt, seq), and what the store counts per host.
type hostQueue struct {
	host   string
	items  []*entry
	ridx   int // index in the ready heap, -1 while not in it
	leased int // leased jobs of the host: the per-host cap's count
	refs   int // stored jobs of the host: the record goes with the last
}

func entryLess(a, b *entry) bool {
	if a.runAt != b.runAt {
		return a.runAt < b.runAt
	}
	return a.seq < b.seq
}

func (h *hostQueue) Len() int           { return len(h.items) }
func (h *hostQueue) Less(i, j int) bool { return entryLess(h.items[i], h.items[j]) }
func (h *hostQueue) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *hostQueue) Push(x any)         { h.items = append(h.items, x.(*entry)) }
func (h *hostQueue) Pop() any {
	e := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	return e
}

// readyHeap orders non-empty host queues by their earliest entry.
type readyHeap []*hostQueue

func (r readyHeap) Len() int           { return len(r) }
func (r readyHeap) Less(i, j int) bool { return entryLess(r[i].items[0], r[j].items[0]) }
func (r readyHeap) Swap(i, j int) {
	r[i], r[j] = r[j], r[i]
	r[i].ridx, r[j].ridx = i, j
}
func (r *readyHeap) Push(x any) {
	hq := x.(*hostQueue)
	hq.ridx = len(*r)
	*r = append(*r, hq)
}
func (r *readyHeap) Pop() any {
	old := *r
	hq := old[len(old)-1]
	old[len(old)-1] = nil
	*r = old[:len(old)-1]
	hq.ridx = -1
	return hq
}
