package engine

import "time"

// Config holds the delivery engine's numbers: SPEC §2's, and the ones a
// row of docs/benchmarks.md measures. Zero fields take the defaults of
// DefaultConfig. What the engine derives from them is private (tuning).
type Config struct {
	// Workers is how many deliveries run at a time in this process (SPEC
	// §2: 8, HERALD_WORKERS), beside as many waits on hosts that do not
	// answer.
	Workers int
	// PerHost is the most deliveries at a time to one remote host for the
	// whole deployment: the store counts every process's leases (SPEC §2:
	// 2, HERALD_PER_HOST).
	PerHost int
	// ParkAfter is how long a delivery to a host that has not answered
	// promptly lately holds its slot before it waits beside the slots
	// (SPEC §2: 1 s). The fan-out row "dead hosts; waits keep their slots
	// (ParkAfter 1 h)" of docs/benchmarks.md measures what it saves.
	ParkAfter time.Duration
	// NoHold turns off the hold of a host whose attempt failed (SPEC §2:
	// held until the retry curve's first step), for the fan-out row "dead
	// hosts; no hold after a failure" of docs/benchmarks.md, which
	// measures what the hold saves.
	NoHold bool

	LeaseFor   time.Duration // SPEC §2: leases of 2 min
	PollEvery  time.Duration // SPEC §2: a lease poll every 5 s when nobody wakes the engine
	ReapEvery  time.Duration // SPEC §2: a reaper pass every 30 s
	PurgeEvery time.Duration // SPEC §2: a retention purge every hour; negative: none (a store with a TTL index)
	Retention  time.Duration // SPEC §2: finished jobs are kept 7 days
	Grace      time.Duration // SPEC §2: shutdown grace for in-flight deliveries, 30 s (HERALD_SHUTDOWN_GRACE)
	Owner      string        // this process's name on its leases

	tuning
}

// tuning is what the engine derives from Config, none of it a rule of SPEC
// §2: throughput devices and the budgets of the slow-host rules.
type tuning struct {
	// waits is the budget of deliveries waiting on hosts that have not
	// answered, beside the Workers slots (Workers): a delivery to a host
	// whose last attempt failed waits there from its start, one to a host
	// that has not answered lately parks there after ParkAfter.
	waits int
	// failingSlots caps the deliveries at a time, all hosts together, to
	// hosts whose last attempt failed (SPEC §2: a quarter of the slots'
	// worth, at least 1): they run in the waits, and their retries leave
	// room there for the first contacts that park.
	failingSlots int
	// leaseAhead is how many jobs the dispatcher leases beyond its free
	// slots while leases come back full (Workers): the next batch, leased
	// while the current one is in flight, so that freed slots need not
	// wait for a round trip. They hold their leases and their hosts'
	// slots (for every process) while they wait; a kill -9 leaves them to
	// the reaper, undelivered.
	leaseAhead int
	// flushMax is the most results one write carries (4×Workers, at least
	// 32). Deliveries running and results not yet written are what a kill
	// -9 sends again: the dispatcher starts no delivery while they number
	// Workers + waits + flushMax, so that is the bound however far the
	// store falls behind.
	flushMax int
	// flushEvery is how long the completer gathers results before it
	// writes them (10 ms); it writes at once when flushMax results wait, or
	// when the dispatcher found nothing to lease.
	flushEvery time.Duration
	// leaseWindow is how long the dispatcher, woken by a freed slot while
	// other deliveries still run, waits for more slots to free before it
	// leases, so that one round trip fills several (1 ms). It never delays
	// a lease when every slot is free.
	leaseWindow time.Duration
	// busyPoll is the lease poll for busyFor (2 s) after a wake-up or a
	// lease that found work, when a lease comes back short of the free
	// slots (100 ms, at most PollEvery). Other processes may hold hosts at
	// the per-host cap, and their slots free without a word to this
	// process; polling every 5 s then would leave the whole fan-out to
	// whichever process leased first (SPEC §9: the work spreads across
	// processes).
	busyPoll, busyFor time.Duration
}

// DefaultConfig returns SPEC §2's numbers.
func DefaultConfig() Config {
	return Config{
		Workers:    8,
		PerHost:    2,
		ParkAfter:  time.Second,
		LeaseFor:   2 * time.Minute,
		PollEvery:  5 * time.Second,
		ReapEvery:  30 * time.Second,
		PurgeEvery: time.Hour,
		Retention:  7 * 24 * time.Hour,
		Grace:      30 * time.Second,
		Owner:      "herald",
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	orDefault(&c.Workers, d.Workers)
	orDefault(&c.PerHost, d.PerHost)
	orDefault(&c.ParkAfter, d.ParkAfter)
	orDefault(&c.LeaseFor, d.LeaseFor)
	orDefault(&c.PollEvery, d.PollEvery)
	orDefault(&c.ReapEvery, d.ReapEvery)
	orDefault(&c.Retention, d.Retention)
	orDefault(&c.Grace, d.Grace)
	if c.PurgeEvery == 0 {
		c.PurgeEvery = d.PurgeEvery
	}
	if c.Owner == "" {
		c.Owner = d.Owner
	}
	t := &c.tuning
	orDefault(&t.waits, c.Workers)
	orDefault(&t.failingSlots, min(max(1, c.Workers/4), t.waits))
	orDefault(&t.leaseAhead, c.Workers)
	orDefault(&t.flushMax, max(32, 4*c.Workers))
	orDefault(&t.flushEvery, 10*time.Millisecond)
	orDefault(&t.leaseWindow, time.Millisecond)
	orDefault(&t.busyPoll, min(100*time.Millisecond, c.PollEvery))
	orDefault(&t.busyFor, 2*time.Second)
	return c
}

// orDefault sets *v to def when it is zero or negative.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Private numbers of the dispatcher: none is a rule of SPEC §2.
const (
	// leaseDepth is how many lease round trips the dispatcher keeps going
	// at once: one for the slots that are free, and one ahead for the
	// slots that the running batch will free. A lease is a commit (a WAL
	// flush) and a round trip; two of them overlap in the server and in
	// the network, so the slots do not stand idle while one is in flight.
	leaseDepth = 2
	// aheadWaitShare: a job leased ahead starts within LeaseFor/8 of its
	// lease's answer (admit), or goes back.
	aheadWaitShare = 8
	// minLeaseLeft: a job starts only with minLeaseLeft/aheadWaitShare
	// (5/8) of LeaseFor left: a delivery's timeout (at most half of it,
	// bootstrap checks) and an eighth to write its result.
	minLeaseLeft = 5
)
