package application

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Operator gathers what the operator API, the operator page and the CLI
// do: read the queue and the breakers, retry dead jobs, lift a quarantine,
// and hold or release system names. It has its own constructor so the
// operator surface can be wired without the client use cases.
type Operator struct {
	admin         ports.JobAdmin
	jobs          ports.JobStore
	instances     ports.InstanceStore
	names         ports.NameRegistry
	fanOuts       ports.FanOutStore
	policy        domain.NamePolicy
	instanceActor string
	clock         ports.Clock
	waker         Waker
	lift          LiftQuarantineHandler
	view          *queueView
}

// OperatorDeps are the Operator's collaborators. Waker may be nil (the CLI
// has no engine in its process; the workers poll).
type OperatorDeps struct {
	JobAdmin      ports.JobAdmin
	Jobs          ports.JobStore
	Instances     ports.InstanceStore
	Names         ports.NameRegistry
	FanOuts       ports.FanOutStore // nil: no fan-out records to show
	Policy        domain.NamePolicy
	InstanceActor string // the instance actor's user name
	Clock         ports.Clock
	Waker         Waker
}

// NewOperator builds the operator use cases.
func NewOperator(d OperatorDeps) *Operator {
	actor, err := domain.NormalizeName(d.InstanceActor)
	if err != nil {
		actor = strings.ToLower(strings.TrimSpace(d.InstanceActor))
	}
	o := &Operator{
		admin: d.JobAdmin, jobs: d.Jobs, instances: d.Instances, names: d.Names, fanOuts: d.FanOuts, policy: d.Policy,
		instanceActor: actor, clock: d.Clock, waker: d.Waker,
		lift: LiftQuarantineHandler{Instances: d.Instances, Jobs: d.Jobs, Clock: d.Clock, Waker: d.Waker},
	}
	o.view = &queueView{read: o.readQueue, clock: d.Clock}
	return o
}

// Paging bounds of the job listing.
const (
	DefaultJobPage = 50
	MaxJobPage     = 500
	// TopHosts is how many hosts the per-host counts show per state.
	TopHosts = 20
)

// QueueStats is the queue at a glance, as read at At. Its map and slices
// may be shared with other answers: read them, do not change them.
type QueueStats struct {
	At       time.Time
	ByState  map[domain.JobState]int
	Total    int
	Queued   []ports.HostCount // largest first, at most TopHosts
	Leased   []ports.HostCount
	Dead     []ports.HostCount
	InFlight int // filled by callers that know the engine; 0 otherwise
}

// Queue counts jobs by state, and by host for queued, leased and dead. Where
// readings are slow it answers from the latest one (queue_view.go).
func (o *Operator) Queue(ctx context.Context) (QueueStats, error) {
	return o.view.get(ctx)
}

// readQueue is one reading of the queue: four counts, side by side, so it
// waits for the slowest of them rather than their sum.
func (o *Operator) readQueue(ctx context.Context) (QueueStats, error) {
	s := QueueStats{At: o.clock.Now()}
	byHost := []struct {
		state domain.JobState
		dst   *[]ports.HostCount
	}{{domain.JobQueued, &s.Queued}, {domain.JobLeased, &s.Leased}, {domain.JobDead, &s.Dead}}
	errs := make([]error, len(byHost)+1)
	var wg sync.WaitGroup
	wg.Go(func() {
		if s.ByState, errs[0] = o.admin.Counts(ctx); errs[0] != nil {
			errs[0] = fmt.Errorf("queue counts: %w", errs[0])
		}
	})
	for i, p := range byHost {
		wg.Go(func() {
			if *p.dst, errs[i+1] = o.admin.CountsByHost(ctx, p.state, TopHosts); errs[i+1] != nil {
				errs[i+1] = fmt.Errorf("%s counts by host: %w", p.state, errs[i+1])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return QueueStats{}, err
	}
	for _, st := range domain.JobStates() {
		s.Total += s.ByState[st]
	}
	return s, nil
}

// JobsQuery pages through jobs. State is required to be valid when set;
// After is the last ID of the previous page.
type JobsQuery struct {
	State domain.JobState
	Host  string
	After string
	Limit int // 0: DefaultJobPage; more than MaxJobPage is refused
}

// JobsPage is one page; Next is the cursor of the next page, empty at the
// end.
type JobsPage struct {
	Jobs []domain.Job
	Next string
}

// Jobs lists jobs in ID order.
func (o *Operator) Jobs(ctx context.Context, q JobsQuery) (JobsPage, error) {
	if q.State != "" && !q.State.Valid() {
		return JobsPage{}, fmt.Errorf("%w: state %q is not one of queued, leased, succeeded, dead", domain.ErrInvalidInput, q.State)
	}
	switch {
	case q.Limit == 0:
		q.Limit = DefaultJobPage
	case q.Limit < 0 || q.Limit > MaxJobPage:
		return JobsPage{}, fmt.Errorf("%w: limit %d is not from 1 to %d", domain.ErrInvalidInput, q.Limit, MaxJobPage)
	}
	// One more than asked tells whether there is a next page.
	jobs, err := o.admin.List(ctx, ports.JobFilter{State: q.State, Host: strings.ToLower(strings.TrimSpace(q.Host)), AfterID: q.After, Limit: q.Limit + 1})
	if err != nil {
		return JobsPage{}, fmt.Errorf("list jobs: %w", err)
	}
	p := JobsPage{Jobs: jobs}
	if len(jobs) > q.Limit {
		p.Jobs = jobs[:q.Limit]
		p.Next = p.Jobs[q.Limit-1].ID
	}
	return p, nil
}

// RecentDead returns up to n dead jobs, the most recently finished first,
// looking at no more than scan of them (the store pages by ID only, so a
// queue with more dead jobs than that shows the newest among the oldest
// scan; the operator page says so).
func (o *Operator) RecentDead(ctx context.Context, n, scan int) ([]domain.Job, error) {
	jobs, err := o.admin.List(ctx, ports.JobFilter{State: domain.JobDead, Limit: scan})
	if err != nil {
		return nil, fmt.Errorf("list dead jobs: %w", err)
	}
	slices.SortFunc(jobs, func(a, b domain.Job) int {
		return cmp.Or(b.FinishedAt.Compare(a.FinishedAt), cmp.Compare(a.ID, b.ID))
	})
	return jobs[:min(n, len(jobs))], nil
}

// RetryJob puts one dead job back in the queue, due now, with its attempts
// reset: domain.ErrNotFound for an unknown id, domain.ErrInvalidInput for a
// job that is not dead.
func (o *Operator) RetryJob(ctx context.Context, id string) (domain.Job, error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return domain.Job{}, fmt.Errorf("%w: job id is empty", domain.ErrInvalidInput)
	}
	j, err := o.admin.Get(ctx, id)
	if err != nil {
		return domain.Job{}, err
	}
	if j.State != domain.JobDead {
		return domain.Job{}, fmt.Errorf("%w: job %s is %s, only dead jobs can be retried", domain.ErrInvalidInput, id, j.State)
	}
	n, err := o.admin.RetryDead(ctx, id, "", o.clock.Now())
	if err != nil {
		return domain.Job{}, fmt.Errorf("retry job %s: %w", id, err)
	}
	if n == 0 {
		// Retried by someone else between Get and RetryDead.
		return domain.Job{}, fmt.Errorf("%w: job %s is no longer dead", domain.ErrInvalidInput, id)
	}
	o.view.wrote()
	o.wake()
	return o.admin.Get(ctx, id)
}

// RetryHostDead puts every dead job of host back in the queue and returns
// how many moved.
func (o *Operator) RetryHostDead(ctx context.Context, host string) (int, error) {
	host, err := cleanHost(host)
	if err != nil {
		return 0, err
	}
	n, err := o.admin.RetryDead(ctx, "", host, o.clock.Now())
	if err != nil {
		return 0, fmt.Errorf("retry dead jobs of %s: %w", host, err)
	}
	if n > 0 {
		o.view.wrote()
		o.wake()
	}
	return n, nil
}

// InstanceView is one host's breaker state as an operator reads it.
type InstanceView struct {
	domain.RemoteInstance
	Quarantined bool
}

// Instances lists remote hosts by name, or only the quarantined ones.
func (o *Operator) Instances(ctx context.Context, quarantinedOnly bool) ([]InstanceView, error) {
	now := o.clock.Now()
	var at time.Time
	if quarantinedOnly {
		at = now
	}
	rs, err := o.instances.List(ctx, at)
	if err != nil {
		return nil, fmt.Errorf("list instances: %w", err)
	}
	out := make([]InstanceView, len(rs))
	for i, r := range rs {
		out[i] = InstanceView{RemoteInstance: r, Quarantined: r.Quarantined(now)}
	}
	return out, nil
}

// TopFailing returns up to n hosts with failures, most consecutive
// failures first.
func (o *Operator) TopFailing(ctx context.Context, n int) ([]InstanceView, error) {
	all, err := o.Instances(ctx, false)
	if err != nil {
		return nil, err
	}
	failing := slices.DeleteFunc(all, func(v InstanceView) bool { return v.ConsecutiveFailures == 0 })
	slices.SortStableFunc(failing, func(a, b InstanceView) int {
		return cmp.Compare(b.ConsecutiveFailures, a.ConsecutiveFailures)
	})
	return failing[:min(n, len(failing))], nil
}

// Lift ends a host's quarantine by hand (domain.ErrNotFound for a host
// never seen).
func (o *Operator) Lift(ctx context.Context, host string) (LiftResult, error) {
	host, err := cleanHost(host)
	if err != nil {
		return LiftResult{}, err
	}
	return o.lift.Handle(ctx, host)
}

// ReserveName holds a name as a system name, so no persona or group can
// take it: domain.ErrNameTaken if anything holds it already.
func (o *Operator) ReserveName(ctx context.Context, name string) (domain.ReservedName, error) {
	rn, err := domain.NewReservedName(name, domain.NameKindSystem, "", o.clock.Now())
	if err != nil {
		return domain.ReservedName{}, err
	}
	if err := o.names.Reserve(ctx, rn); err != nil {
		return domain.ReservedName{}, err
	}
	return rn, nil
}

// ReleaseName frees a system name an operator had reserved. The names that
// are never available (the fixed list, the instance actor's name, those of
// HERALD_RESERVED_NAMES) and names held by a persona, a group or the
// instance actor are refused with domain.ErrForbidden; a name nobody holds
// is domain.ErrNotFound.
func (o *Operator) ReleaseName(ctx context.Context, name string) error {
	n, err := domain.NormalizeName(name)
	if err != nil {
		return err
	}
	switch {
	case slices.Contains(domain.FixedReservedNames(), n):
		return fmt.Errorf("%w: %q is on the fixed list of names that are never available", domain.ErrForbidden, n)
	case n == o.instanceActor:
		return fmt.Errorf("%w: %q is the instance actor's name", domain.ErrForbidden, n)
	case o.policy.Never(n):
		return fmt.Errorf("%w: %q is reserved by configuration (HERALD_RESERVED_NAMES); remove it there", domain.ErrForbidden, n)
	}
	held, err := o.names.Get(ctx, n)
	if err != nil {
		return err
	}
	if held.Kind != domain.NameKindSystem {
		return fmt.Errorf("%w: %q is held by a %s, not reserved by an operator", domain.ErrForbidden, n, held.Kind)
	}
	return o.names.Release(ctx, n, "")
}

// SystemNames lists the system reservations, by name.
func (o *Operator) SystemNames(ctx context.Context) ([]domain.ReservedName, error) {
	return o.names.List(ctx, domain.NameKindSystem)
}

func (o *Operator) wake() {
	if o.waker != nil {
		o.waker.Wake()
	}
}

// cleanHost lower-cases a host[:port] and refuses what cannot be one.
func cleanHost(host string) (string, error) {
	h := strings.ToLower(strings.TrimSpace(host))
	if h == "" || strings.ContainsAny(h, "/ ?#@") {
		return "", fmt.Errorf("%w: host %q: want host or host:port", domain.ErrInvalidInput, host)
	}
	return h, nil
}

// RecentFanOuts is how many fan-outs the operator surfaces show.
const RecentFanOuts = 20

// FanOutView is one fan-out's progress: the followers it goes to, the
// jobs it has enqueued so far and where they are.
type FanOutView struct {
	ID        string // the activity id
	Actor     string
	Followers int // accepted followers when it began
	// Enqueued is the jobs present for its activity body (every state);
	// Recorded is what its record counts (at most Enqueued: see
	// domain.FanOut.Queued).
	Enqueued  int
	Recorded  int
	Delivered int // succeeded
	Dead      int
	Pending   int  // queued or leased
	Done      bool // every page enqueued
	Cursor    string
	Owner     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// FanOuts returns the most recent fan-outs with their progress, newest
// first (at most limit, RecentFanOuts when limit < 1).
func (o *Operator) FanOuts(ctx context.Context, limit int) ([]FanOutView, error) {
	if o.fanOuts == nil {
		return nil, nil
	}
	if limit < 1 {
		limit = RecentFanOuts
	}
	list, err := o.fanOuts.List(ctx, limit)
	if err != nil {
		return nil, fmt.Errorf("fan-outs: %w", err)
	}
	out := make([]FanOutView, 0, len(list))
	for _, f := range list {
		c, err := o.admin.CountsOfBody(ctx, f.BodyID)
		if err != nil {
			return nil, fmt.Errorf("fan-out %s progress: %w", f.ID, err)
		}
		v := FanOutView{ID: f.ID, Actor: f.ActorURI, Followers: f.Total, Recorded: f.Queued,
			Delivered: c[domain.JobSucceeded], Dead: c[domain.JobDead], Pending: c[domain.JobQueued] + c[domain.JobLeased],
			Done: f.Done, Cursor: f.Cursor, Owner: f.Owner, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
		v.Enqueued = v.Delivered + v.Dead + v.Pending
		out = append(out, v)
	}
	return out, nil
}
