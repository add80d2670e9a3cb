package application

import (
	"context"
	"sync"
	"time"

	"github.com/heraldfed/herald/ports"
)

// How the queue view is served where a reading is slow.
//
// A reading (the counts by state and by host, side by side) costs a few
// milliseconds on a store that keeps its counts (SQLite, PostgreSQL). A
// store that counts by reading the jobs, Mongo on DocumentDB, takes longer
// the more jobs it keeps: about 90 ms at 30,000 queued and 120,000 finished
// on a quiet machine, a few times that on a busy one (BenchmarkQueueView in
// adapters/mongo). The operator page reloads itself every few seconds and
// scripts poll the API: each request would wait that long and add a whole
// reading to the store's load. So, as River UI's counts (riverqueue/riverui
// pull request 655) and Oban Web's (oban-bg/oban_web issue 52) do, when the
// latest reading took SlowQueueReading or more, a request answers from it
// while it is younger than QueueReadingMaxAge and starts the next reading in
// the background, one at a time however many ask. The answer's At says when
// its numbers were read. When the latest reading took less, the request
// reads afresh. A retry through the Operator drops the kept reading, so the
// page that follows it shows its effect; other changes (the engine's work, a
// domain suspension, another process) show in the next reading.
const (
	SlowQueueReading   = 50 * time.Millisecond
	QueueReadingMaxAge = 30 * time.Second
	// queueReadingTimeout bounds a background reading, which no request
	// waits for.
	queueReadingTimeout = time.Minute
)

// queueView keeps the latest reading of the queue.
type queueView struct {
	read  func(context.Context) (QueueStats, error)
	clock ports.Clock

	mu      sync.Mutex
	last    QueueStats
	took    time.Duration
	kept    bool   // last is a reading to answer from
	lastSeq uint64 // the place, in the order readings began, of the last one kept
	begun   uint64 // readings begun so far
	reading bool   // a background reading is under way
	writes  uint64 // the operator's writes so far: a reading begun before one is not kept
	behind  sync.WaitGroup
}

// get answers from the latest reading where readings are slow and it is
// recent, and reads afresh otherwise.
func (v *queueView) get(ctx context.Context) (QueueStats, error) {
	v.mu.Lock()
	// A reading dated after now (the wall clock stepped back) is not
	// recent: it would be shown until the clock caught up.
	age := v.clock.Now().Sub(v.last.At)
	if v.kept && v.took >= SlowQueueReading && age >= 0 && age < QueueReadingMaxAge {
		s := v.last
		if !v.reading {
			v.reading = true
			v.behind.Add(1)
			go v.readBehind(context.WithoutCancel(ctx))
		}
		v.mu.Unlock()
		return s, nil
	}
	v.mu.Unlock()
	return v.readNow(ctx)
}

// readNow reads the queue and keeps the reading, unless one begun after it
// is kept already or the operator changed jobs while it read.
func (v *queueView) readNow(ctx context.Context) (QueueStats, error) {
	v.mu.Lock()
	v.begun++
	seq, writes := v.begun, v.writes
	v.mu.Unlock()
	start := v.clock.Now()
	s, err := v.read(ctx)
	if err != nil {
		return QueueStats{}, err
	}
	took := v.clock.Now().Sub(start)
	v.mu.Lock()
	defer v.mu.Unlock()
	if writes == v.writes && seq > v.lastSeq {
		v.last, v.took, v.kept, v.lastSeq = s, took, true, seq
	}
	return s, nil
}

// readBehind is the background reading. A failed one drops the kept
// reading, so that the next request reads afresh and reports the error.
// It outlives its request by queueReadingTimeout at the most.
func (v *queueView) readBehind(ctx context.Context) {
	defer v.behind.Done()
	ctx, cancel := context.WithTimeout(ctx, queueReadingTimeout)
	defer cancel()
	_, err := v.readNow(ctx)
	v.mu.Lock()
	defer v.mu.Unlock()
	v.reading = false
	if err != nil {
		v.kept = false
	}
}

// wrote drops the kept reading after the operator changed jobs.
func (v *queueView) wrote() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.writes++
	v.kept = false
}
