package engine

import "time"

// Config holds the delivery engine's numbers (SPEC §2). Zero fields
// take the defaults of DefaultConfig.
type Config struct {
	Workers int // deliveries at a time in this process (8)
	// PerHost is the most deliveries at a time to one remote host (2), for
	// the whole deployment: the store counts every process's leases.
	PerHost int
	// Waits is the budget of waits on hosts that have not answered, beside
	// the Workers slots (Workers): a delivery to a host whose last attempt
	// failed runs in it from its start, and one to a host that has not
	// answered lately (its first contact) moves into it when it has run
	// ParkAfter without an answer, giving its slot back. A dead server's
	// timeout then costs a slot at most ParkAfter, not the whole timeout,
	// while at most Workers deliveries at a time go to hosts that answer.
	Waits int
	// FailingSlots caps the deliveries at a time, all hosts together, to
	// hosts whose last attempt failed (Workers/4, at least 1): they run in
	// the Waits budget, so that their retries leave room there for the
	// first contacts that wait.
	FailingSlots int
	// ParkAfter is how long a delivery to a host that has not answered
	// lately holds its slot before it waits in the Waits budget (1 s:
	// most servers answer in well under a second).
	ParkAfter time.Duration
	// Hold is how long an attempt that failed against its host holds the
	// host's other jobs, unattempted (holdFailedHosts): zero, the first step
	// of the retry curve (16 s and its jitter), or a 429's Retry-After if
	// longer; negative, no hold (the benchmark measures what it saves).
	Hold time.Duration

	LeaseFor   time.Duration // lease length (2 min)
	PollEvery  time.Duration // lease poll when nobody wakes the engine (5 s)
	ReapEvery  time.Duration // reaper period (30 s)
	PurgeEvery time.Duration // retention purge period (1 h); negative disables it (TTL stores)
	Retention  time.Duration // finished jobs are kept this long (7 days)
	Grace      time.Duration // shutdown grace for in-flight deliveries (30 s)
	Owner      string        // this process's name on its leases

	// BusyPoll is the lease poll for BusyFor (2 s) after a wake-up or a
	// lease that found work, when a lease comes back short of the free
	// slots (100 ms). Other processes may hold hosts at the per-host cap,
	// and their slots free without a word to this process; polling every
	// 5 s then would leave the whole fan-out to whichever process leased
	// first (SPEC §9: the work spreads across processes).
	BusyPoll time.Duration
	BusyFor  time.Duration

	// LeaseWindow is how long the dispatcher, woken by a freed slot while
	// other deliveries still run, waits for more slots to free before it
	// leases, so that one round trip fills several (1 ms; negative: lease
	// at once). It never delays a lease when every slot is free.
	LeaseWindow time.Duration
	// LeaseAhead is how many jobs the dispatcher leases beyond its free
	// slots while leases come back full (Workers; negative: none): the
	// next batch, leased while the current one is in flight, so that freed
	// slots need not wait for a round trip. They hold their leases and
	// their hosts' slots (for every process) while they wait; a kill -9
	// leaves them to the reaper, undelivered.
	LeaseAhead int
	// FlushEvery is how long the completer gathers results before it
	// writes them (10 ms); it writes at once when FlushMax results wait, or
	// when the dispatcher found nothing to lease.
	FlushEvery time.Duration
	// FlushMax is the most results one write carries (4×Workers, at least
	// 32). Deliveries running and results not yet written are what a kill
	// -9 sends again: the dispatcher starts no delivery while they number
	// Workers + Waits + FlushMax, so that is the bound however far the
	// store falls behind.
	FlushMax int
}

// DefaultConfig returns SPEC §2's numbers.
func DefaultConfig() Config {
	return Config{
		Workers:     8,
		PerHost:     2,
		ParkAfter:   time.Second,
		LeaseFor:    2 * time.Minute,
		PollEvery:   5 * time.Second,
		BusyPoll:    100 * time.Millisecond,
		BusyFor:     2 * time.Second,
		ReapEvery:   30 * time.Second,
		PurgeEvery:  time.Hour,
		Retention:   7 * 24 * time.Hour,
		Grace:       30 * time.Second,
		LeaseWindow: time.Millisecond,
		FlushEvery:  10 * time.Millisecond,
	}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Workers <= 0 {
		c.Workers = d.Workers
	}
	if c.PerHost <= 0 {
		c.PerHost = d.PerHost
	}
	if c.Waits <= 0 {
		c.Waits = c.Workers
	}
	if c.FailingSlots <= 0 {
		c.FailingSlots = max(1, c.Workers/4)
	}
	c.FailingSlots = min(c.FailingSlots, c.Waits)
	if c.ParkAfter <= 0 {
		c.ParkAfter = d.ParkAfter
	}
	if c.LeaseFor <= 0 {
		c.LeaseFor = d.LeaseFor
	}
	if c.PollEvery <= 0 {
		c.PollEvery = d.PollEvery
	}
	if c.BusyPoll <= 0 {
		c.BusyPoll = d.BusyPoll
	}
	c.BusyPoll = min(c.BusyPoll, c.PollEvery)
	if c.BusyFor <= 0 {
		c.BusyFor = d.BusyFor
	}
	if c.ReapEvery <= 0 {
		c.ReapEvery = d.ReapEvery
	}
	if c.PurgeEvery == 0 {
		c.PurgeEvery = d.PurgeEvery
	}
	if c.Retention <= 0 {
		c.Retention = d.Retention
	}
	if c.Grace <= 0 {
		c.Grace = d.Grace
	}
	if c.Owner == "" {
		c.Owner = "herald"
	}
	if c.LeaseWindow == 0 {
		c.LeaseWindow = d.LeaseWindow
	}
	if c.LeaseAhead == 0 {
		c.LeaseAhead = c.Workers
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = d.FlushEvery
	}
	if c.FlushMax <= 0 {
		c.FlushMax = max(32, 4*c.Workers)
	}
	return c
}

// Private numbers of the dispatcher and the host policy: none is a rule of
// SPEC §2, each is explained where it is used.
const (
	// leaseDepth is how many lease round trips the dispatcher keeps going
	// at once: one for the slots that are free, and one ahead for the
	// slots that the running batch will free. A lease is a commit (a WAL
	// flush) and a round trip; two of them overlap in the server and in
	// the network, so the slots do not stand idle while one is in flight.
	leaseDepth = 2
	// aheadWaitShare: a job leased ahead starts only within LeaseFor/8 of
	// its lease (admit), or goes back.
	aheadWaitShare = 8
)
