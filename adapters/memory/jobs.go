package memory

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
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
type JobStore struct {
	mu      sync.Mutex
	seq     uint64
	jobs    map[string]*entry
	byKey   map[string]string
	hosts   map[string]*hostQueue
	ready   readyHeap
	leased  map[string]*entry
	perHost map[string]int // leased jobs by host: the per-host cap's count
	byState map[domain.JobState]int
	// bodies holds each activity body once, with the number of jobs that
	// refer to it: the last job purged takes its body along.
	bodies map[string]*body
}

type body struct {
	data []byte
	refs int
}

type entry struct {
	job  domain.Job
	seq  uint64
	hq   *hostQueue
	hidx int // index in hq.items while queued, else -1
}

// NewJobStore returns an empty queue.
func NewJobStore() *JobStore {
	return &JobStore{
		jobs:    make(map[string]*entry),
		byKey:   make(map[string]string),
		hosts:   make(map[string]*hostQueue),
		leased:  make(map[string]*entry),
		perHost: make(map[string]int),
		byState: make(map[domain.JobState]int),
		bodies:  make(map[string]*body),
	}
}

// Enqueue implements ports.JobStore.
func (s *JobStore) Enqueue(ctx context.Context, jobs []domain.Job) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, j := range jobs {
		if j.ID == "" || j.DedupeKey == "" || j.Host == "" || !j.State.Valid() {
			return 0, fmt.Errorf("%w: job %q is not valid; build it with domain.NewJob", domain.ErrInvalidInput, j.ID)
		}
	}
	jobs, split := ports.SplitBodies(jobs)
	bodies := make(map[string][]byte, len(split))
	for _, b := range split {
		bodies[b.ID] = b.Data
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	// All or nothing: check every id before inserting any.
	ids := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		if _, dup := s.byKey[j.DedupeKey]; dup {
			continue
		}
		if _, dup := s.jobs[j.ID]; dup || ids[j.ID] {
			return 0, fmt.Errorf("%w: job id %q", domain.ErrAlreadyExists, j.ID)
		}
		ids[j.ID] = true
	}
	n := 0
	for _, j := range jobs {
		if _, dup := s.byKey[j.DedupeKey]; dup {
			continue
		}
		s.addBodyRef(j.BodyID, bodies)
		s.seq++
		e := &entry{job: j, seq: s.seq, hidx: -1}
		s.jobs[j.ID] = e
		s.byKey[j.DedupeKey] = j.ID
		s.byState[j.State]++
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

// LeaseBatch implements ports.JobStore. The per-host cap is counted from
// the leased jobs themselves (perHost), under the mutex, so it holds for
// every caller of this store: one memory store is one process.
func (s *JobStore) LeaseBatch(ctx context.Context, req ports.LeaseRequest) ([]domain.Job, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Token == "" {
		return nil, fmt.Errorf("%w: lease without a token", domain.ErrInvalidInput)
	}
	limit := max(req.Limit, 1)
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
	for len(out) < limit && s.ready.Len() > 0 {
		hq := s.ready[0]
		head := hq.items[0]
		if head.job.RunAt.After(req.Now) {
			break // every other host's earliest job is later still
		}
		if slices.Contains(req.SkipHosts, hq.host) || (req.PerHost > 0 && s.perHost[hq.host] >= req.PerHost) {
			aside = append(aside, heap.Pop(&s.ready).(*hostQueue))
			continue
		}
		s.unqueue(head) // the host's next job, if any, takes its place in the heap
		s.setState(head, domain.JobLeased)
		head.job.LeaseOwner = req.Owner
		head.job.LeaseToken = req.Token
		head.job.LeaseUntil = req.Until
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

func (s *JobStore) addLeased(e *entry) {
	s.leased[e.job.ID] = e
	s.perHost[e.job.Host]++
}

func (s *JobStore) dropLeased(e *entry) {
	delete(s.leased, e.job.ID)
	if s.perHost[e.job.Host]--; s.perHost[e.job.Host] <= 0 {
		delete(s.perHost, e.job.Host)
	}
}

// held returns the entry if token holds its lease.
func (s *JobStore) held(id, token string) (*entry, error) {
	e, ok := s.jobs[id]
	if !ok || e.job.State != domain.JobLeased || e.job.LeaseToken != token || token == "" {
		return nil, fmt.Errorf("job %s: %w", id, domain.ErrLeaseLost)
	}
	return e, nil
}

func (s *JobStore) finish(e *entry, state domain.JobState, at time.Time) {
	s.dropLeased(e)
	s.setState(e, state)
	e.job.FinishedAt = at
	clearLease(&e.job)
}

// Settle implements ports.JobStore, the whole batch under one hold of the
// mutex.
func (s *JobStore) Settle(ctx context.Context, batch []ports.Settlement) ([]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ports.CheckSettlements(batch); err != nil {
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
		e.job.Attempts = st.Attempts
		e.job.LastError = st.LastError
		if st.State == domain.JobQueued {
			s.requeue(e, st.RunAt)
		} else {
			s.finish(e, st.State, st.FinishedAt)
		}
	}
	return lost, nil
}

func (s *JobStore) requeue(e *entry, runAt time.Time) {
	s.dropLeased(e)
	clearLease(&e.job)
	s.setState(e, domain.JobQueued)
	e.job.RunAt = runAt
	s.push(e)
}

// Reap implements ports.JobStore.
func (s *JobStore) Reap(ctx context.Context, now time.Time, maxAttempts int) (ports.ReapResult, error) {
	if err := ctx.Err(); err != nil {
		return ports.ReapResult{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var r ports.ReapResult
	for _, e := range s.leased {
		if !e.job.LeaseUntil.Before(now) {
			continue
		}
		e.job.Attempts++
		e.job.LastError = "lease expired (worker died or stalled)"
		if e.job.Attempts >= maxAttempts {
			s.finish(e, domain.JobDead, now)
			r.Dead++
			continue
		}
		s.requeue(e, now)
		r.Requeued++
	}
	return r, nil
}

// Purge implements ports.JobStore.
func (s *JobStore) Purge(ctx context.Context, finishedBefore time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for id, e := range s.jobs {
		if e.job.State.Finished() && e.job.FinishedAt.Before(finishedBefore) {
			delete(s.jobs, id)
			delete(s.byKey, e.job.DedupeKey)
			s.dropBodyRef(e.job.BodyID)
			s.byState[e.job.State]--
			n++
		}
	}
	return n, nil
}

// DeferHost implements ports.JobStore.
func (s *JobStore) DeferHost(ctx context.Context, host string, until time.Time) (int, error) {
	return s.moveHost(ctx, host, func(runAt time.Time) bool { return runAt.Before(until) }, until)
}

// ResumeHost implements ports.JobStore.
func (s *JobStore) ResumeHost(ctx context.Context, host string, until, now time.Time) (int, error) {
	return s.moveHost(ctx, host, func(runAt time.Time) bool { return runAt.After(now) && !runAt.After(until) }, now)
}

func (s *JobStore) moveHost(ctx context.Context, host string, match func(time.Time) bool, to time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	hq, ok := s.hosts[host]
	if !ok {
		return 0, nil
	}
	n := 0
	for _, e := range hq.items {
		if match(e.job.RunAt) {
			e.job.RunAt = to
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
	out := make(map[domain.JobState]int, 4)
	for _, st := range domain.JobStates() {
		out[st] = s.byState[st]
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
	out := make(map[domain.JobState]int, 4)
	for _, st := range domain.JobStates() {
		out[st] = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.jobs {
		if e.job.BodyID == bodyID && bodyID != "" {
			out[e.job.State]++
		}
	}
	return out, nil
}

// CountsByHost implements ports.JobAdmin.
func (s *JobStore) CountsByHost(ctx context.Context, state domain.JobState, limit int) ([]ports.HostCount, error) {
	s.mu.Lock()
	counts := make(map[string]int)
	for _, e := range s.jobs {
		if e.job.State == state {
			counts[e.job.Host]++
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
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
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
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.Job
	for _, e := range s.jobs {
		if (f.State == "" || e.job.State == f.State) && (f.Host == "" || e.job.Host == f.Host) && e.job.ID > f.AfterID {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	revive := func(e *entry) {
		e.job.Attempts = 0
		e.job.FinishedAt = time.Time{}
		s.setState(e, domain.JobQueued)
		e.job.RunAt = now
		s.push(e)
	}
	if id != "" {
		e, ok := s.jobs[id]
		if !ok || e.job.State != domain.JobDead || (host != "" && e.job.Host != host) {
			return 0, nil
		}
		revive(e)
		return 1, nil
	}
	n := 0
	for _, e := range s.jobs {
		if e.job.State == domain.JobDead && e.job.Host == host {
			revive(e)
			n++
		}
	}
	return n, nil
}

func (s *JobStore) copyOut(e *entry) domain.Job {
	j := e.job
	if b, ok := s.bodies[j.BodyID]; ok {
		j.Payload = slices.Clone(b.data)
	}
	return j
}

func (s *JobStore) setState(e *entry, st domain.JobState) {
	s.byState[e.job.State]--
	s.byState[st]++
	e.job.State = st
}

func clearLease(j *domain.Job) {
	j.LeaseOwner, j.LeaseToken, j.LeaseUntil = "", "", time.Time{}
}

// push adds a queued entry to its host's heap.
func (s *JobStore) push(e *entry) {
	hq, ok := s.hosts[e.job.Host]
	if !ok {
		hq = &hostQueue{host: e.job.Host, ridx: -1}
		s.hosts[e.job.Host] = hq
	}
	e.hq = hq
	heap.Push(hq, e)
	if hq.ridx < 0 {
		heap.Push(&s.ready, hq)
	} else {
		heap.Fix(&s.ready, hq.ridx)
	}
}

// unqueue removes a queued entry from its host's heap.
func (s *JobStore) unqueue(e *entry) {
	hq := e.hq
	heap.Remove(hq, e.hidx)
	e.hq = nil
	switch {
	case hq.Len() == 0:
		if hq.ridx >= 0 {
			heap.Remove(&s.ready, hq.ridx)
		}
		delete(s.hosts, hq.host)
	case hq.ridx >= 0:
		heap.Fix(&s.ready, hq.ridx)
	}
}

// hostQueue is a min-heap of one host's queued entries by (RunAt, seq).
type hostQueue struct {
	host  string
	items []*entry
	ridx  int // index in the ready heap, -1 while not in it
}

func entryLess(a, b *entry) bool {
	if !a.job.RunAt.Equal(b.job.RunAt) {
		return a.job.RunAt.Before(b.job.RunAt)
	}
	return a.seq < b.seq
}

func (h *hostQueue) Len() int           { return len(h.items) }
func (h *hostQueue) Less(i, j int) bool { return entryLess(h.items[i], h.items[j]) }
func (h *hostQueue) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.items[i].hidx, h.items[j].hidx = i, j
}
func (h *hostQueue) Push(x any) {
	e := x.(*entry)
	e.hidx = len(h.items)
	h.items = append(h.items, e)
}
func (h *hostQueue) Pop() any {
	e := h.items[len(h.items)-1]
	h.items[len(h.items)-1] = nil
	h.items = h.items[:len(h.items)-1]
	e.hidx = -1
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
