package mongo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/ports"
)

var _ ports.WakeSource = (*Waker)(nil)

// collJobSignals holds one document, _id "enqueued", whose n every Enqueue
// that inserted jobs (and every RetryDead and ResumeHost that made some
// runnable) increments: the signal other processes' Wakers follow, by a
// change stream on this small collection where the server has them, or by
// reading n where it has none. A change stream on jobs itself would carry
// every lease and settlement to every process.
const collJobSignals = "job_signals"

const signalEnqueued = "enqueued"

// WakePollEvery is how often a Waker without change streams reads the
// signal: other processes' enqueues wake this one within it, instead of at
// the engine's 5 s poll. One read of one document by _id per period.
const WakePollEvery = time.Second

// Reconnect backoff of the change stream, as the PostgreSQL listener's.
const (
	wakerMinBackoff = 100 * time.Millisecond
	wakerMaxBackoff = 30 * time.Second
)

// signal bumps the enqueue signal. It is best effort: the jobs are stored
// whatever happens to it, and a process that misses the signal finds them
// at its next poll.
func (s *JobStore) signal(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	_, _ = collection(s.jobs.Database(), collJobSignals).UpdateOne(ctx,
		bson.D{{Key: "_id", Value: signalEnqueued}},
		bson.D{{Key: "$inc", Value: bson.D{{Key: "n", Value: int64(1)}}}},
		options.Update().SetUpsert(true))
}

// Waker turns enqueues in any process (the job_signals counter) into
// wake-ups for this process's idle workers, as the PostgreSQL adapter's
// LISTEN/NOTIFY does.
//
// It watches job_signals with a change stream. A server without change
// streams (FerretDB, a standalone mongod) refuses the stream when it is
// opened: the Waker logs that once and reads the counter every pollEvery
// from then on. A stream that breaks on a server that has them is opened
// again with backoff, the counter read meanwhile. After every (re)start it
// wakes the workers once, since jobs may have been enqueued while nobody
// watched. Wake-ups are coalesced, as on PostgreSQL: the channel has room
// for one.
type Waker struct {
	signals   *mongodrv.Collection
	clock     ports.Clock
	pollEvery time.Duration
	log       *slog.Logger
}

// NewWaker returns a Waker on db's job_signals; pollEvery is the read
// period without change streams (WakePollEvery if not positive).
func NewWaker(db *mongodrv.Database, clock ports.Clock, pollEvery time.Duration, log *slog.Logger) *Waker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if pollEvery <= 0 {
		pollEvery = WakePollEvery
	}
	return &Waker{signals: collection(db, collJobSignals), clock: clock, pollEvery: pollEvery,
		log: log.With("component", "mongo_waker", "collection", collJobSignals)}
}

// Wakeups implements ports.WakeSource: call it once per engine; it watches
// until ctx ends. The channel is never closed.
func (w *Waker) Wakeups(ctx context.Context) <-chan struct{} {
	ch := make(chan struct{}, 1)
	go w.run(ctx, ch)
	return ch
}

func (w *Waker) run(ctx context.Context, ch chan<- struct{}) {
	backoff := wakerMinBackoff
	for {
		watched, err := w.watch(ctx, ch)
		if ctx.Err() != nil {
			return
		}
		if !watched && changeStreamsUnsupported(err) {
			w.log.Warn("mongo: the server has no change streams; other processes' enqueues are seen by polling",
				"every", w.pollEvery, "err", err)
			w.poll(ctx, ch, nil)
			return
		}
		if watched {
			backoff = wakerMinBackoff
		}
		w.log.Warn("mongo change stream is down; polling until it is back", "err", interpretError(err, nil), "retry_in", backoff)
		w.poll(ctx, ch, w.clock.After(backoff))
		if ctx.Err() != nil {
			return
		}
		backoff = min(backoff*2, wakerMaxBackoff)
	}
}

// watch opens the change stream and forwards its events until it fails or
// ctx ends; watched reports whether it opened.
func (w *Waker) watch(ctx context.Context, ch chan<- struct{}) (watched bool, err error) {
	cs, err := w.signals.Watch(ctx, mongodrv.Pipeline{})
	if err != nil {
		return false, err
	}
	defer func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = cs.Close(c)
	}()
	w.log.Info("mongo change stream ready")
	wake(ch) // jobs may have come while nobody watched
	for cs.Next(ctx) {
		wake(ch)
	}
	if err := cs.Err(); err != nil {
		return true, err
	}
	return true, fmt.Errorf("change stream ended")
}

// poll reads the counter every pollEvery until ctx ends or until fires
// (nil: never), waking on every change and once at the start. The first
// read comes before the first wake-up: an enqueue after that wake-up (the
// proof worker's "ready") changes the counter from what was read, so it is
// seen; read after the wake-up, it could be taken as the starting value.
func (w *Waker) poll(ctx context.Context, ch chan<- struct{}, until <-chan time.Time) {
	last, ok := w.read(ctx)
	failing := !ok
	wake(ch)
	for {
		select {
		case <-ctx.Done():
			return
		case <-until:
			return
		case <-w.clock.After(w.pollEvery):
		}
		n, ok := w.read(ctx)
		switch {
		case !ok:
			failing = true
			continue
		case failing:
			// Back after failed reads: changes may have been missed.
			failing = false
			wake(ch)
		case n != last:
			wake(ch)
		}
		last = n
	}
}

// read returns the counter (0 before the first enqueue); ok is false when
// the read failed, which is logged at debug level only: the engine's own
// poll and lease errors already tell of a store that is down.
func (w *Waker) read(ctx context.Context) (n int64, ok bool) {
	var d struct {
		N int64 `bson:"n"`
	}
	err := w.signals.FindOne(ctx, bson.D{{Key: "_id", Value: signalEnqueued}}).Decode(&d)
	if errors.Is(err, mongodrv.ErrNoDocuments) {
		return 0, true
	}
	if err != nil {
		if ctx.Err() == nil {
			w.log.Debug("mongo waker: reading the enqueue signal failed", "err", interpretError(err, nil))
		}
		return 0, false
	}
	return d.N, true
}

// Codes with which servers refuse a change stream for good: this server
// (or this deployment: a standalone mongod) has none.
var noChangeStreamCodes = map[int32]bool{
	codeCommandNotFound:     true,
	codeCommandNotSupported: true, // FerretDB v2: "Stage $changeStream is not supported yet"
	codeNotImplemented:      true,
	40573:                   true, // MongoDB standalone: "The $changeStream stage is only supported on replica sets"
	40324:                   true, // "Unrecognized pipeline stage name: '$changeStream'" (older servers)
}

func changeStreamsUnsupported(err error) bool {
	var se mongodrv.ServerError
	if !errors.As(err, &se) {
		return false
	}
	for code := range noChangeStreamCodes {
		if se.HasErrorCode(int(code)) {
			return true
		}
	}
	return false
}

// wake sends without blocking: a full channel already holds a wake-up.
func wake(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
