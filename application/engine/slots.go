package engine

import (
	"context"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
)

// slots counts this process's running deliveries, under its own lock: the
// dispatcher admits them (admit), each frees its place from its own
// goroutine (work). A delivery holds one of the Workers slots, or a place
// in the waits beside them:
//   - one to a host whose last attempt failed waits there from its start,
//     at most failingSlots of them at a time;
//   - one to a host whose last answer took longer than ParkAfter waits
//     there from its start when there is room, else as soon as there is:
//     it would give its slot back after ParkAfter anyway;
//   - one to a host that has not answered lately parks there after
//     ParkAfter without an answer (park), if there is room, giving its
//     slot back: a dead server's timeout costs a slot ParkAfter at most.
//
// However many servers are slow or dead, their deliveries hold slots only
// for ParkAfter (until they have answered once) or while the waits are
// taken: the slots stay the prompt hosts'.
type slots struct {
	workers, waits, failingMax int
	parkAfter                  time.Duration
	// bound is the most deliveries running and results unwritten at once:
	// what a kill -9 may send again (Workers + waits + flushMax).
	bound int

	mu      sync.Mutex
	inSlots int // deliveries holding one of the Workers slots
	waiting int // deliveries in the waits
	failing int // deliveries to hosts whose last attempt failed (in the waits)
	flights map[*flight]struct{}
}

// flight is one running delivery, guarded by slots.mu.
type flight struct {
	parkAt  time.Time // when it moves to the waits; zero: never (its host answers)
	inWaits bool      // it holds a place in the waits, not a slot
	failing bool      // its host's last attempt failed (it counts in failing)
	host    string
	unheard bool // its host had not answered lately, nor failed, when it started
	silent  bool // it parked while unheard: hostPolicy.silent counts it
}

func newSlots(cfg Config) *slots {
	return &slots{
		workers: cfg.Workers, waits: cfg.waits, failingMax: cfg.failingSlots, parkAfter: cfg.ParkAfter,
		bound: cfg.Workers + cfg.waits + cfg.flushMax, flights: map[*flight]struct{}{},
	}
}

// running is the number of deliveries running, in slots and waiting.
func (s *slots) running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inSlots + s.waiting
}

// taken is the number of deliveries holding a slot.
func (s *slots) taken() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inSlots
}

// failingFull reports whether no more deliveries to failing hosts may
// start: their share of the waits, or the waits, are taken.
func (s *slots) failingFull() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.failingFullLocked()
}

func (s *slots) failingFullLocked() bool { return s.failing >= s.failingMax || s.waiting >= s.waits }

// behind reports whether the deliveries running and the unwritten results
// have reached the bound a kill -9 may re-deliver.
func (s *slots) behind(unwritten int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inSlots+s.waiting+unwritten >= s.bound
}

// admission is what take decided for a job.
type admission int

const (
	admitted    admission = iota
	noSlot                // no slot free: this job and the rest wait
	failingFull           // its host is failing and their share of the waits is taken: it goes back
)

// take gives a job a place, by what the host policy says of its host (v),
// and counts it.
func (s *slots) take(host string, v hostVerdict, now time.Time) (*flight, admission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := &flight{failing: v.failing, host: host}
	switch {
	case v.failing && s.failingFullLocked():
		return nil, failingFull
	case v.failing:
		f.inWaits = true
		s.failing++
		s.waiting++
	case v.slow && s.waiting < s.waits:
		f.inWaits = true
		s.waiting++
	case s.inSlots >= s.workers:
		return nil, noSlot
	default:
		switch {
		case v.slow:
			f.parkAt = now // to the waits as soon as one frees
		case !v.answered:
			f.parkAt = now.Add(s.parkAfter)
			f.unheard = true
		}
		s.inSlots++
	}
	s.flights[f] = struct{}{}
	return f, admitted
}

// free gives back a delivery's place and returns how many still run.
func (s *slots) free(f *flight) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.flights, f)
	if f.inWaits {
		s.waiting--
	} else {
		s.inSlots--
	}
	if f.failing {
		s.failing--
	}
	return s.inSlots + s.waiting
}

// ended marks f's attempt over, so that it no longer parks, and says
// whether it parked on a host not heard from lately (silent).
func (s *slots) ended(f *flight) (silent bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.parkAt = time.Time{}
	return f.silent
}

// park moves the deliveries that have waited ParkAfter on a host that has
// not answered lately from their slots into the waits, as far as it
// has room, and returns the next time one is due (zero: none) and whether
// any moved. It calls silence, under its lock (so before the delivery's
// end can take it back), with the host of each that moves without its
// host having been heard from lately.
func (s *slots) park(now time.Time, silence func(host string)) (next time.Time, moved bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for f := range s.flights {
		if f.inWaits || f.parkAt.IsZero() {
			continue
		}
		if now.Before(f.parkAt) {
			if next.IsZero() || f.parkAt.Before(next) {
				next = f.parkAt
			}
			continue
		}
		if s.waiting >= s.waits {
			continue // it keeps its slot; a freed wait wakes the dispatcher
		}
		f.inWaits = true
		s.inSlots--
		s.waiting++
		moved = true
		if f.unheard {
			f.silent = true
			silence(f.host)
		}
	}
	return next, moved
}

// admit starts the jobs leased and not yet started (ahead, in queue order)
// as far as this process has room, keeps the rest in ahead, and returns
// how many it sent back. What the engine adds to the store's per-host cap:
//   - a job of a held host (one that just failed, or asked to wait with
//     Retry-After: hostPolicy.hold) goes back to the end of the hold,
//     unattempted;
//   - a job of a host whose last attempt failed waits in the waits,
//     at most failingSlots of them at a time: the failing-host jobs beyond
//     that go straight back (a release through the completer: no attempt
//     spent, their place in the queue kept);
//   - a job of a host whose last answer took longer than ParkAfter starts
//     in the waits when one is free, even with every slot taken;
//   - any other job takes one of the Workers slots, and may park after
//     ParkAfter when its host has not answered lately (at once, when its
//     host answers slowly and a wait frees);
//   - no job starts while the deliveries running and the results not yet
//     written reach Workers + waits + flushMax: what a kill -9 may
//     re-deliver stays within that however far the store falls behind;
//   - a job that waited here for more than an eighth of its lease goes
//     back, unattempted, rather than start late (rare: jobs are leased
//     ahead only while the results keep up, leaseRoom); the wait counts
//     from the lease round trip's answer, so a store that answers slowly
//     (seconds, on a loaded server) does not send back every job it leased;
//   - a job whose lease has less than 5/8 of LeaseFor left goes back
//     too: a delivery may take HERALD_DELIVERY_TIMEOUT, at most half the
//     lease, and its result needs an eighth more to be written before
//     the lease ends. Only a lease round trip that took 3/8 of the lease
//     (45 s of the 2 min default) leaves that little.
//
// The first job that needs a slot when none is free stops admission: the
// rest wait, in order, for the next freed slot.
func (d *dispatcher) admit(deliverCtx context.Context, now time.Time, deliveries *sync.WaitGroup) (sentBack int) {
	if len(d.ahead) == 0 {
		return 0
	}
	// Past the bound nothing starts until the completer has written a
	// batch (it signals flushed). Only this goroutine starts deliveries,
	// so the count read here can only fall before take.
	unwritten := d.done.unwritten()
	var start []admittedJob
	i := 0
jobs:
	for ; i < len(d.ahead); i++ {
		j, arrived := d.ahead[i].job, d.ahead[i].arrived
		if d.slots.behind(unwritten) {
			break // the results are behind: this job and the rest wait
		}
		v := d.hosts.verdict(j.Host, now)
		if v.held {
			d.sendBack(release(j, v.heldUntil, "host held after a failure"), &sentBack)
			continue
		}
		if now.Sub(arrived) > d.cfg.LeaseFor/aheadWaitShare {
			// Leased ahead and kept waiting (slow deliveries, results
			// behind): it held its host's place long enough.
			d.sendBack(release(j, j.RunAt, "leased ahead and waited too long for a slot"), &sentBack)
			continue
		}
		if j.LeaseUntil.Sub(now) < d.cfg.LeaseFor*minLeaseLeft/aheadWaitShare {
			d.sendBack(release(j, j.RunAt, "too little of its lease left for a delivery and its result"), &sentBack)
			continue
		}
		f, a := d.slots.take(j.Host, v, now)
		switch a {
		case failingFull:
			d.sendBack(release(j, j.RunAt, "failing hosts' slots taken"), &sentBack)
			continue
		case noSlot:
			break jobs // this job and the rest wait
		}
		start = append(start, admittedJob{job: j, flight: f})
	}
	d.ahead = d.ahead[i:]
	if len(start) > 0 {
		d.obs.InFlight(d.slots.running())
	}
	for _, a := range start {
		deliveries.Add(1)
		go func() {
			defer deliveries.Done()
			d.work(deliverCtx, a.job, a.flight)
		}()
	}
	return sentBack
}

// admittedJob is a job admit gave a place, and its place.
type admittedJob struct {
	job    domain.Job
	flight *flight
}

func (d *dispatcher) sendBack(r result, n *int) {
	d.done.add(r)
	*n++
}

// work runs one admitted job, hands its result to the completer and frees
// its place. The host's slot in the store stays taken until the completer
// has written the result.
func (d *dispatcher) work(ctx context.Context, job domain.Job, f *flight) {
	r := d.deliver(ctx, job)
	r.silent = d.slots.ended(f)
	d.hosts.heard(r)
	d.done.add(r)
	n := d.slots.free(f)
	d.obs.InFlight(n)
	signal(d.freed)
}
