package application

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Fan-out tuning.
const (
	// FanOutLease is how long a fan-out stays with the process running it
	// without news; each page extends it. A process that dies mid-way
	// leaves its fan-out to be claimed this long after its last page.
	FanOutLease = 30 * time.Second
	// FanOutResumeEvery is how often a process looks for fan-outs whose
	// runner died.
	FanOutResumeEvery = 10 * time.Second
	// FanOutRetention is how long a finished fan-out's record is kept
	// (as long as its finished jobs); the resumer purges older ones.
	FanOutRetention = 7 * 24 * time.Hour
	// maxSharedSeen bounds the shared inboxes one run remembers to skip
	// repeats across pages; beyond it the set starts over and the jobs'
	// dedupe keys catch the repeats (reported as already queued).
	maxSharedSeen = 10000
)

// FanOutHandler delivers an activity to every accepted follower of a local
// actor, streamed: one page of followers at a time is resolved to inboxes
// (shared inboxes first) and enqueued in batches, so memory stays bounded
// by the page, not by the follower count (the next page is read while one
// is enqueued: followerPages). With a FanOutStore each page is recorded in
// a durable FanOut before the next is enqueued, and a fan-out
// whose process died is claimed (Resume) and continued after its cursor;
// the dedupe keys make the page that was enqueued but not recorded a
// no-op the second time, so every inbox gets exactly one job.
type FanOutHandler struct {
	deps    Deps
	enqueue EnqueueHandler
	local   func(uri string) bool
}

// FanOutOf starts a fan-out of one activity to the followers of ActorURI.
type FanOutOf struct {
	ActivityID string
	ActorURI   string
	SenderID   string
	KeyID      string
	Payload    []byte
	// Skip is inboxes enqueued already by the caller (addressed
	// recipients): they get no second job, and are not counted again.
	Skip []string
}

// FanOutResult says what one run enqueued.
type FanOutResult struct {
	Inboxes int // distinct inboxes this run submitted (repeats across pages may be counted)
	EnqueueResult
}

// Start records the fan-out (when the store keeps records) and runs it to
// the end in the caller's goroutine. A fan-out already recorded under the
// activity id (an Announce made twice) is left as it is: nothing is
// queued twice, and the result is empty.
func (h FanOutHandler) Start(ctx context.Context, cmd FanOutOf) (FanOutResult, error) {
	d := h.deps
	total, err := d.Followers.CountFollowers(ctx, cmd.ActorURI, domain.FollowAccepted)
	if err != nil {
		return FanOutResult{}, fmt.Errorf("count followers: %w", err)
	}
	now := d.Clock.Now()
	owner := d.IDs.NewID()
	f, err := domain.NewFanOut(cmd.ActivityID, cmd.ActorURI, cmd.SenderID, cmd.KeyID, cmd.Payload, total, owner, now, now.Add(FanOutLease))
	if err != nil {
		return FanOutResult{}, err
	}
	if d.FanOuts != nil {
		err := d.FanOuts.Create(ctx, f)
		if errors.Is(err, domain.ErrAlreadyExists) {
			d.Log.Debug("fan-out recorded already", "activity", f.ID)
			return FanOutResult{}, nil
		}
		if err != nil {
			return FanOutResult{}, fmt.Errorf("record fan-out: %w", err)
		}
	}
	return h.run(ctx, f, cmd.Skip)
}

// Resume claims every fan-out whose runner's lease expired and runs each
// to the end, one after the other; it returns how many it finished. A
// store without records has nothing to resume.
func (h FanOutHandler) Resume(ctx context.Context) (int, error) {
	if h.deps.FanOuts == nil {
		return 0, nil
	}
	n := 0
	for ctx.Err() == nil {
		now := h.deps.Clock.Now()
		f, err := h.deps.FanOuts.Claim(ctx, h.deps.IDs.NewID(), now, now.Add(FanOutLease))
		if errors.Is(err, domain.ErrNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("claim fan-out: %w", err)
		}
		h.deps.Log.Info("fan-out resumed", "activity", f.ID, "cursor", f.Cursor, "queued", f.Queued, "total", f.Total)
		res, err := h.run(ctx, f, nil)
		if err != nil {
			return n, fmt.Errorf("resume fan-out %s: %w", f.ID, err)
		}
		h.deps.Log.Info("fan-out finished", "activity", f.ID, "queued", res.Queued, "already_queued", res.AlreadyQueued)
		n++
	}
	return n, ctx.Err()
}

// RunResumer calls Resume now and every FanOutResumeEvery until ctx ends,
// and purges the records finished more than FanOutRetention ago once an
// hour.
func (h FanOutHandler) RunResumer(ctx context.Context) {
	if h.deps.FanOuts == nil {
		return
	}
	var purged time.Time
	for {
		if _, err := h.Resume(ctx); err != nil && ctx.Err() == nil {
			h.deps.Log.Warn("fan-out resume", "err", err)
		}
		if now := h.deps.Clock.Now(); now.Sub(purged) >= time.Hour {
			purged = now
			if n, err := h.deps.FanOuts.Purge(ctx, now.Add(-FanOutRetention)); err != nil && ctx.Err() == nil {
				h.deps.Log.Warn("fan-out purge", "err", err)
			} else if n > 0 {
				h.deps.Log.Info("fan-out records purged", "deleted", n)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-h.deps.Clock.After(FanOutResumeEvery):
		}
	}
}

// run enqueues the followers after f.Cursor, page by page, recording
// each page in the store once it and every page before it are enqueued.
// A page's enqueue runs while the next page is built and its enqueue
// started (fanOutInFlight pages at most), so the store inserts two pages
// at once on two connections (a PostgreSQL backend each) instead of
// waiting for this process between pages. A page enqueued but not
// recorded when the process dies (one, or two) is enqueued again by the
// run that resumes from the recorded cursor: its dedupe keys make that a
// no-op.
func (h FanOutHandler) run(ctx context.Context, f domain.FanOut, skip []string) (FanOutResult, error) {
	var res FanOutResult
	seen := make(map[string]struct{}, len(skip))
	for _, s := range skip {
		seen[s] = struct{}{}
	}
	pages, stop := h.followerPages(ctx, f.ActorURI, f.Cursor)
	defer stop()
	var bufs [fanOutInFlight][]domain.Job
	var prev *pageEnqueue // the page started before, not yet recorded
	for k := 0; ; k++ {
		page, ok := <-pages
		if !ok {
			// The reader stops early only when ctx ends.
			h.drop(prev)
			return res, ctx.Err()
		}
		if page.err != nil {
			h.drop(prev)
			return res, page.err
		}
		jobs := h.pageJobs(f, page.actors, seen, bufs[k%fanOutInFlight][:0])
		bufs[k%fanOutInFlight] = jobs
		cur := h.startPage(ctx, jobs, page.after, page.read < followerPage)
		if prev != nil {
			if done, err := h.record(ctx, f, prev, &res); done || err != nil {
				h.drop(cur)
				return res, err
			}
		}
		prev = cur
		if prev.last {
			_, err := h.record(ctx, f, prev, &res)
			return res, err
		}
	}
}

// fanOutInFlight is how many pages of one fan-out run's loop holds at
// once (prev and cur): the page started last and the one before it,
// waiting to be recorded. It sizes their job buffers; their jobs are held
// until the page is recorded: two pages, whatever the follower count.
const fanOutInFlight = 2

// pageJobs appends to jobs one job per inbox of a page's actors (a shared
// inbox once per run while seen holds it), spread over the page by host
// (domain.SpreadHosts), and gives them their ids.
func (h FanOutHandler) pageJobs(f domain.FanOut, actors []domain.ActorInboxes, seen map[string]struct{}, jobs []domain.Job) []domain.Job {
	d := h.deps
	if len(seen) > maxSharedSeen {
		clear(seen)
	}
	now := d.Clock.Now()
	for _, fa := range actors {
		inbox := fa.DeliveryInbox()
		if inbox == "" {
			continue
		}
		if _, dup := seen[inbox]; dup {
			continue
		}
		if fa.SharedInbox != "" {
			seen[inbox] = struct{}{}
		}
		j, err := domain.NewJob(pendingID, f.ID, inbox, f.SenderID, f.KeyID, f.Payload, now)
		if err != nil {
			d.Log.Warn("skipping an inbox that is not a valid URL", "inbox", inbox, "err", err)
			continue
		}
		jobs = append(jobs, j)
	}
	domain.SpreadHosts(jobs)
	idsInKeyOrder(jobs, d.IDs)
	return jobs
}

// pageEnqueue is one page's enqueue, running in a goroutine of its own.
type pageEnqueue struct {
	done  chan struct{}
	res   EnqueueResult
	err   error
	n     int    // inboxes submitted
	after string // the cursor past the page
	last  bool   // the fan-out's last page
}

// startPage starts enqueueing a page's jobs.
func (h FanOutHandler) startPage(ctx context.Context, jobs []domain.Job, after string, last bool) *pageEnqueue {
	p := &pageEnqueue{done: make(chan struct{}), n: len(jobs), after: after, last: last}
	go func() {
		defer close(p.done)
		p.res, p.err = h.enqueue.Handle(ctx, jobs)
	}()
	return p
}

// drop waits for a page whose progress will not be recorded (an earlier
// page failed, or the run ends): its jobs are in the store or not, and the
// run that resumes from the recorded cursor enqueues it again either way.
func (h FanOutHandler) drop(p *pageEnqueue) {
	if p != nil {
		<-p.done
	}
}

// record waits for a page's enqueue, counts it into res and records the
// fan-out's progress past it. done is true where the run must stop
// without an error: another process took the fan-out over.
func (h FanOutHandler) record(ctx context.Context, f domain.FanOut, p *pageEnqueue, res *FanOutResult) (done bool, err error) {
	<-p.done
	res.Queued += p.res.Queued
	res.AlreadyQueued += p.res.AlreadyQueued
	res.Inboxes += p.n
	if p.err != nil {
		return false, p.err
	}
	d := h.deps
	if d.FanOuts == nil {
		return false, nil
	}
	now := d.Clock.Now()
	_, err = d.FanOuts.Advance(ctx, ports.FanOutProgress{ID: f.ID, Owner: f.Owner, Cursor: p.after,
		Queued: p.res.Queued, Done: p.last, Now: now, Until: now.Add(FanOutLease)})
	if errors.Is(err, domain.ErrLeaseLost) {
		// Another process claimed it (this one stalled past its lease):
		// it continues from the recorded cursor.
		d.Log.Warn("fan-out taken over by another process", "activity", f.ID, "cursor", p.after)
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("record fan-out progress: %w", err)
	}
	return false, nil
}

// pendingID names a job of a page until idsInKeyOrder gives it its id.
const pendingID = "00000000-0000-0000-0000-000000000000" // the nil UUID: a job id NewJob takes

// idsInKeyOrder gives a page's jobs their ids (ascending, as IDs makes
// them: UUIDv7) in the order of their dedupe keys. A store that inserts a
// batch in key order, as PostgreSQL does so that two batches sharing keys
// wait for each other instead of deadlocking, then also inserts the ids in
// order: its primary key's pages fill as an append does (about 90%), not
// as random inserts do (about 70%: 78 B of index a job at a million
// followers instead of about 58). The jobs keep the order pageJobs gave
// them; only their ids are sorted.
func idsInKeyOrder(jobs []domain.Job, ids ports.IDs) {
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(jobs[a].DedupeKey, jobs[b].DedupeKey) })
	for _, i := range order {
		jobs[i].ID = ids.NewID()
	}
}
