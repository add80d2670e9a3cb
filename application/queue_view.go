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
// reading to the store's load. So, as River UI and Oban Web do with their counts,
// once a reading has taken SlowQueueReading or more, a request answers from
// the latest reading while it is younger than QueueReadingMaxAge and starts
// the next reading in the background: one at a time, however many ask. The
// answer's At says when its numbers were read. Where readings are fast,
// every request reads afresh. An operator's retry through the Operator
// drops the kept reading: the page that follows it shows its effect.
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
	reading bool   // a background reading is under way
	writes  uint64 // the operator's writes so far: a reading begun before one is not kept
}

// get answers from the latest reading where readings are slow and it is
// recent, and reads afresh otherwise.
func (v *queueView) get(ctx context.Context) (QueueStats, error) {
	v.mu.Lock()
	if v.kept && v.took >= SlowQueueReading && v.clock.Now().Sub(v.last.At) < QueueReadingMaxAge {
		s := v.last
		if !v.reading {
			v.reading = true
			go v.readBehind(context.WithoutCancel(ctx))
		}
		v.mu.Unlock()
		return s, nil
	}
	v.mu.Unlock()
	return v.readNow(ctx)
}

// readNow reads the queue and keeps the reading.
func (v *queueView) readNow(ctx context.Context) (QueueStats, error) {
	v.mu.Lock()
	writes := v.writes
	v.mu.Unlock()
	start := v.clock.Now()
	s, err := v.read(ctx)
	if err != nil {
		return QueueStats{}, err
	}
	took := v.clock.Now().Sub(start)
	v.mu.Lock()
	defer v.mu.Unlock()
	// Readings that ran side by side: the one that started last wins.
	if writes == v.writes && (!v.kept || !s.At.Before(v.last.At)) {
		v.last, v.took, v.kept = s, took, true
	}
	return s, nil
}

// readBehind is the background reading. A failed one drops the kept
// reading, so that the next request reads afresh and reports the error.
func (v *queueView) readBehind(ctx context.Context) {
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
