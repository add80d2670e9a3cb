package main

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"
)

// soakSlowLatency is the slow servers' mean answer time (uniform 2–5 s):
// at 2 at a time, a slow server can take 2/3.5 deliveries a second.
const soakSlowLatency = 3500 * time.Millisecond

// windows are the first fifth and the last half of the load: the issue's
// first 2 minutes and last 5 of a 10-minute soak.
func (r *soakRun) windows() (first, last [2]time.Duration) {
	return [2]time.Duration{0, r.duration / 5}, [2]time.Duration{r.duration - r.duration/2, r.duration}
}

// rate is the healthy first deliveries a second in [from, to).
func rate(perSecond []int, w [2]time.Duration) float64 {
	n := 0
	for s := int(w[0] / time.Second); s < int(w[1]/time.Second) && s < len(perSecond); s++ {
		n += perSecond[s]
	}
	return float64(n) / (w[1] - w[0]).Seconds()
}

func (r *soakRun) demand() float64 { return float64(r.wantPost) / soakPostEvery.Seconds() }

// at is the last sample taken at or before t (plus a second's slack); the
// first when none.
func (r *soakRun) at(t time.Duration) soakSample {
	best := r.samples[0]
	for _, s := range r.samples {
		if s.at <= t+time.Second {
			best = s
		}
	}
	return best
}

// backlog is the healthy deliveries owed at a sample: the published posts'
// healthy inboxes not yet delivered.
func (r *soakRun) backlog(s soakSample) int { return s.published*r.wantPost - s.healthy }

// minute is one minute of the load.
type soakMinute struct {
	healthy, cpu, machine, leaseMs, leasesPerS float64
	queued, goroutines                         float64
	rssKiB                                     int
	p50, p99                                   time.Duration
	inbound                                    int
	adminMax                                   time.Duration
	backlog                                    int
}

func (r *soakRun) minutes() []soakMinute {
	var out []soakMinute
	for m := 0; m < len(r.inbound); m++ {
		t0, t1 := time.Duration(m)*time.Minute, min(time.Duration(m+1)*time.Minute, r.duration)
		a, b := r.at(t0), r.at(t1)
		dt := (b.at - a.at).Seconds()
		if dt <= 0 {
			continue
		}
		x := soakMinute{healthy: rate(r.healthyAt, [2]time.Duration{t0, t1}), cpu: 100 * (b.cpu - a.cpu).Seconds() / dt,
			machine: 100 * (b.machine.Busy - a.machine.Busy).Seconds() / dt, queued: b.queued, goroutines: b.goroutines, rssKiB: b.rssKiB,
			inbound: len(r.inbound[m]), backlog: r.backlog(b)}
		if n := b.leaseCount - a.leaseCount; n > 0 {
			x.leaseMs, x.leasesPerS = 1000*(b.leaseSum-a.leaseSum)/n, n/dt
		}
		x.p50, x.p99 = percentile(r.inbound[m], 0.50), percentile(r.inbound[m], 0.99)
		for _, s := range r.samples {
			if s.at > a.at && s.at <= b.at && s.adminOK {
				x.adminMax = max(x.adminMax, s.admin)
			}
		}
		out = append(out, x)
	}
	return out
}

func percentile(xs []time.Duration, p float64) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// slowCapacity is what the slow servers could take during the load: at 2
// at a time in the slow run, all that was sent in the control.
func (r *soakRun) slowCapacity(f *soakFediverse) float64 {
	total := 0.0
	for _, s := range f.servers {
		if s.kind != soakSlow {
			continue
		}
		n := 1
		if !s.shared {
			n = soakActorsPer
		}
		demand := float64(n) / soakPostEvery.Seconds()
		if r.variant == "slow" {
			demand = min(demand, 2/soakSlowLatency.Seconds())
		}
		total += demand * r.duration.Seconds()
	}
	return total
}

func (r *soakRun) missing() int { return r.posts*r.wantPost - r.healthy }

func (r *soakRun) drainCell() string {
	if r.drained {
		return ms(r.drainTook)
	}
	return "not drained"
}

// adminStats is the slowest operator queue view of the load and drain,
// the median, the oldest reading an answer came from, and how many failed.
func (r *soakRun) adminStats() (worst, median, oldest time.Duration, failed int) {
	var xs []time.Duration
	for _, s := range r.samples {
		if s.adminOK {
			xs = append(xs, s.admin)
			oldest = max(oldest, s.adminAge)
		} else if s.adminErr != "" {
			failed++
		}
	}
	return percentile(xs, 1), percentile(xs, 0.5), oldest, failed
}

func (r *soakRun) label() string { return fmt.Sprintf("%s, %s, %s", r.store, r.variant, r.build) }

func (r *soakRun) summary() string {
	first, last := r.windows()
	mins := r.minutes()
	cpu := "–"
	if len(mins) > 1 {
		cpu = fmt.Sprintf("%.0f%% → %.0f%%", mins[0].cpu, mins[len(mins)-1].cpu)
	}
	worst, _, _, _ := r.adminStats()
	return fmt.Sprintf("%s: healthy %.1f → %.1f/s (demand %.1f), missing %d, drain %s, %d duplicates, CPU %s, queue view worst %s, %d inbound not 202",
		r.label(), rate(r.healthyAt, first), rate(r.healthyAt, last), r.demand(), r.missing(), r.drainCell(), r.dups, cpu, ms(worst), r.inboundBad)
}

func soakTables(rep *report, f *soakFediverse, runs []*soakRun, o soakOpts, load0, load1 string, current *heraldBuild) {
	if len(runs) == 0 {
		rep.add(&table{title: "Soak: a busy instance under sustained load", header: []string{"run"}, rows: [][]string{{"not measured: every run failed (see the notes)"}}})
		return
	}
	d := o.duration
	wf, wl := runs[0].windows()
	command := "go run ./test/bench/heraldbench -only soak [-soak-duration 10m] [-soak-stores sqlite,postgres] [-soak-baseline REV]"
	intro := fmt.Sprintf("A `herald serve` process on loopback, fresh store, its persona followed by %d actors on %d servers (half with a shared inbox, half delivering to %d personal inboxes each: %d inboxes a post, %d of them on healthy servers). "+
		"For %s: a post every %s, %d signed `Create{Note}` a second and one `Like` a second to the shared inbox (an open loop of at most %d outstanding requests), while %d servers answer after 2–5 s, %d accept and never answer and %d refuse connections; "+
		"healthy servers answer in 5–50 ms. The control run is the same with the slow servers answering at once. Then a drain of at most %s. "+
		"Healthy deliveries/s: first deliveries of a post to an inbox of a healthy server, over the first fifth (%s) and the last half (%s) of the load, against the demand (%d inboxes every %s = %.1f/s). "+
		"Bounds (issue 36): last-half rate ≥ 0.90× the control's, the healthy backlog not growing over the last half, every healthy delivery within 60 s of the load's end, no duplicate; SQLite's CPU per minute ≤ 1.2× from the first to the last; inbound p99 ≤ 250 ms; operator queue view < 100 ms.",
		soakServers*soakActorsPer, soakServers, soakActorsPer, len(f.inboxes), runs[0].wantPost,
		d, soakPostEvery, soakCreatesPerS, soakInFlight, count(f, soakSlow), count(f, soakDead), count(f, soakRefused), o.drain,
		ms(wf[1]-wf[0]), ms(wl[1]-wl[0]), runs[0].wantPost, soakPostEvery, runs[0].demand())
	control := func(r *soakRun) *soakRun {
		for _, c := range runs {
			if c.store == r.store && c.build == r.build && c.variant == "control" {
				return c
			}
		}
		return nil
	}
	t := &table{
		title:   "Soak: a busy instance under sustained load",
		command: command,
		intro:   intro,
		header: []string{"store, variant, build", "healthy deliveries/s: first → last (demand)", "last / control's last (≥ 0.90×)", "healthy backlog: last half's start → load end",
			"queued at load end", "slow servers: deliveries / what they could take", "healthy missing after the drain", "last healthy delivery after the load (≤ 60 s)", "duplicates"},
	}
	for _, r := range runs {
		first, last := r.windows()
		vs := "–"
		if c := control(r); c != nil && c != r {
			vs = ratio(rate(r.healthyAt, last), rate(c.healthyAt, last))
		}
		slow := 0
		for s := 0; s < int(r.duration/time.Second) && s < len(r.slowAt); s++ {
			slow += r.slowAt[s]
		}
		capacity := r.slowCapacity(f)
		end := r.at(r.duration)
		t.rows = append(t.rows, []string{r.label(),
			fmt.Sprintf("%.1f → %.1f (%.1f)", rate(r.healthyAt, first), rate(r.healthyAt, last), r.demand()), vs,
			fmt.Sprintf("%d → %d", r.backlog(r.at(last[0])), r.backlog(end)),
			fmt.Sprintf("%.0f", end.queued), fmt.Sprintf("%d / %.0f (%s)", slow, capacity, ratio(float64(slow), capacity)),
			fmt.Sprintf("%d of %d", r.missing(), r.posts*r.wantPost), r.drainCell(), fmt.Sprint(r.dups)})
	}
	t.notes = append(t.notes, "What the slow servers could take: at 2 deliveries at a time and 3.5 s an answer on average, 0.57 a second each, or their demand when less (a shared inbox: one delivery every 5 s); in the control, every delivery sent to them during the load.")
	t.notes = append(t.notes, "The issue's ten-minute soak, for a quiet machine: `go run ./test/bench/heraldbench -only soak -soak-duration 10m -out /tmp/soak.md` "+
		"(four runs, each about a minute of set-up, the load and a drain of at most 3 minutes: about an hour); `-soak-baseline REV` runs a revision beside the working tree, run for run.")
	rep.add(t)

	c := &table{
		title:   "Soak: what the load costs Herald",
		command: command,
		intro: "Of the same runs. Herald's CPU: the `herald serve` process's user and system time (/proc/PID/stat) a minute, in % of one core; for PostgreSQL the database server's is not in it. " +
			"Inbound p99: of every signed POST of the load (Creates and Likes), answered or not, per minute. Operator queue view: `GET /admin/api/queue` every 10 s; how old the reading it answered with was (its `at`). " +
			"Lease: `herald_lease_duration_seconds` (the engine observer's `Leased`), mean per lease in the first and the last minute, with the queued jobs at that minute's end.",
		header: []string{"store, variant, build", "Herald CPU a minute: first → last (≤ 1.2× on SQLite)", "inbound p99: worst minute (≤ 250 ms)", "inbound not answered 202",
			"operator queue view: worst (median), oldest reading answered", "lease: first → last minute (queued)", "RSS at load end", "goroutines at load end"},
	}
	for _, r := range runs {
		m := r.minutes()
		if len(m) == 0 {
			continue
		}
		a, b := m[0], m[len(m)-1]
		var worst time.Duration
		for _, x := range m {
			worst = max(worst, x.p99)
		}
		aw, am, aa, af := r.adminStats()
		read := "each read for its request"
		if aa > 0 { // answered from a reading kept from before (application/queue_view.go)
			read = fmt.Sprintf("from a reading %s old at most", ms(aa))
		}
		admin := fmt.Sprintf("%s (%s), %s", ms(aw), ms(am), read)
		if af > 0 {
			admin += fmt.Sprintf(", %d failed", af)
		}
		bad := fmt.Sprint(r.inboundBad)
		if r.inboundBad > 0 {
			bad += " (" + r.badSample + ")"
		}
		if r.behind > 0 {
			bad += fmt.Sprintf("; %d sent over 1 s late", r.behind)
		}
		end := r.at(r.duration)
		c.rows = append(c.rows, []string{r.label(), fmt.Sprintf("%.0f%% → %.0f%% (%s)", a.cpu, b.cpu, ratio(b.cpu, a.cpu)), ms(worst), bad, admin,
			fmt.Sprintf("%.2f ms (%.0f) → %.2f ms (%.0f)", a.leaseMs, a.queued, b.leaseMs, b.queued), mib(end.rssKiB), fmt.Sprintf("%.0f", end.goroutines)})
	}
	rep.add(c)

	pm := &table{
		title:   "Soak: minute by minute",
		command: command,
		intro:   "Each minute of each run's load: healthy deliveries/s, the healthy backlog and the queued jobs at the minute's end, the mean lease and leases a second, Herald's CPU (% of one core) and the machine's (% of one core, every process: the load, the fake servers, the database, other work), inbound p50 and p99, the slowest operator queue view, RSS and goroutines at the minute's end.",
		header:  []string{"run", "minute", "healthy/s", "healthy backlog", "queued", "lease (leases/s)", "Herald CPU", "machine CPU", "inbound p50 / p99", "queue view", "RSS", "goroutines"},
	}
	var rateSeries, queueSeries []series
	for _, r := range runs {
		for i, x := range r.minutes() {
			pm.rows = append(pm.rows, []string{r.label(), fmt.Sprint(i + 1), fmt.Sprintf("%.1f", x.healthy), fmt.Sprint(x.backlog), fmt.Sprintf("%.0f", x.queued),
				fmt.Sprintf("%.2f ms (%.0f)", x.leaseMs, x.leasesPerS), fmt.Sprintf("%.0f%%", x.cpu), fmt.Sprintf("%.0f%%", x.machine),
				fmt.Sprintf("%s / %s", ms(x.p50), ms(x.p99)), ms(x.adminMax), mib(x.rssKiB), fmt.Sprintf("%.0f", x.goroutines)})
		}
		rs, qs := series{name: r.label()}, series{name: r.label()}
		for s := 0; s+10 <= int(r.duration/time.Second); s += 10 {
			rs.xs = append(rs.xs, float64(s+10)/60)
			rs.ys = append(rs.ys, rate(r.healthyAt, [2]time.Duration{time.Duration(s) * time.Second, time.Duration(s+10) * time.Second}))
		}
		for _, s := range r.samples {
			qs.xs = append(qs.xs, s.at.Minutes())
			qs.ys = append(qs.ys, s.queued)
		}
		rateSeries, queueSeries = append(rateSeries, rs), append(queueSeries, qs)
	}
	pm.notes = append(pm.notes, fmt.Sprintf("Machine: %s; load average %s before the scenario, %s after. The scenario's own processes (the load, 100 fake servers, PostgreSQL) share the machine with Herald; whatever else runs on it shows in the machine's CPU column. Current build: `%s` %s.",
		strings.Join(machineInfo()[:min(2, len(machineInfo()))], ", "), load0, load1, current.rev, current.tree))
	// The machine's CPU during the load says whether other work competed
	// with Herald; a load average taken just before a run counts the build
	// and set-up the scenario itself does.
	if peak := peakMachineCPU(runs); peak >= saturated*float64(runtime.NumCPU()) {
		pm.notes = append(pm.notes, fmt.Sprintf("**Measured on a shared machine**: every process together used up to %.0f%% of one core in a minute of the load (of the %d cores' %d%%; load average %s before, %s after), so Herald competed for the CPU. Rates, latencies and the CPU trend are then lower bounds of what the code does; take the scenario again on a quiet machine to compare with the bounds.",
			peak, runtime.NumCPU(), 100*runtime.NumCPU(), load0, load1))
	}

	for _, r := range runs {
		for _, n := range r.notes {
			pm.notes = append(pm.notes, fmt.Sprintf("%s: %s", r.label(), n))
		}
	}
	pm.plot = rep.svg("soak-healthy.svg", linearChart("Soak: healthy deliveries/s (10 s means)", "minutes of load", "deliveries/s", rateSeries))
	rep.add(pm)
	rep.add(&table{title: "Soak: queued jobs over time", command: command, header: []string{"run", "queued at load end", "queued after the drain"},
		rows: func() [][]string {
			var rows [][]string
			for _, r := range runs {
				rows = append(rows, []string{r.label(), fmt.Sprintf("%.0f", r.at(r.duration).queued), fmt.Sprintf("%.0f", r.samples[len(r.samples)-1].queued)})
			}
			return rows
		}(),
		plot: rep.svg("soak-queue.svg", linearChart("Soak: queued jobs", "minutes since the load started", "queued jobs", queueSeries))})
}

// saturated is the share of every core's time, every process together,
// past which a minute of the load counts as competing for the CPU: the
// soak's own processes take well under it on a quiet machine.
const saturated = 90.0

// peakMachineCPU is the busiest minute's machine CPU across the runs, in %
// of one core.
func peakMachineCPU(runs []*soakRun) float64 {
	peak := 0.0
	for _, r := range runs {
		for _, x := range r.minutes() {
			peak = max(peak, x.machine)
		}
	}
	return peak
}

func count(f *soakFediverse, k soakKind) int {
	n := 0
	for _, s := range f.servers {
		if s.kind == k {
			n++
		}
	}
	return n
}
