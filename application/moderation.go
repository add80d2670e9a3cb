package application

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// Moderation holds the operator's federation policy (SPEC §11) for every
// part of Herald that talks to other servers: the inboxes ask it before
// any signature work, the dereferencer before a fetch, the engine before a
// delivery, publishing before it addresses anyone. Its rules are read from
// the store and kept for policyTTL, so a check costs no round trip; a
// change made through this process applies at once, one made by another
// process sharing the store within policyTTL.
//
// A nil *Moderation federates with everyone (tests of other parts).
type Moderation struct {
	deps ModerationDeps

	mu     sync.Mutex
	policy domain.Policy
	loaded time.Time // zero: never loaded, or invalidated
	// gen counts invalidations: a read of the rules that began before
	// one is not kept (it may predate the change).
	gen uint64
}

// ModerationDeps are Moderation's collaborators.
type ModerationDeps struct {
	Store     ports.ModerationStore
	JobAdmin  ports.JobAdmin
	Foreign   ports.ForeignActorStore
	Followers ports.FollowerStore
	Mode      domain.FederationMode
	Clock     ports.Clock
	Log       *slog.Logger
	// Observer counts refusals (nil: not counted).
	Observer ports.PolicyObserver
}

// policyTTL is how long a copy of the rules is used before it is read
// again: how soon another process's block reaches this one.
const policyTTL = 10 * time.Second

// NewModeration builds the policy holder; it reads the rules on first use.
func NewModeration(d ModerationDeps) *Moderation {
	if d.Log == nil {
		d.Log = slog.New(slog.DiscardHandler)
	}
	d.Log = d.Log.With("component", "moderation")
	if !d.Mode.Valid() {
		d.Mode = domain.FederationBlocklist
	}
	return &Moderation{deps: d}
}

// Mode is the federation mode Herald runs in.
func (m *Moderation) Mode() domain.FederationMode {
	if m == nil {
		return domain.FederationBlocklist
	}
	return m.deps.Mode
}

// Policy returns the rules, read again when the copy is older than
// policyTTL. When the store cannot be read, the last copy is used (and the
// failure logged); with none, the error is returned and callers refuse
// (fail closed: a blocked server must not get in because our store
// hiccupped).
func (m *Moderation) Policy(ctx context.Context) (domain.Policy, error) {
	if m == nil {
		return domain.NewPolicy(domain.FederationBlocklist, nil, nil), nil
	}
	now := m.deps.Clock.Now()
	m.mu.Lock()
	p, loaded, gen := m.policy, m.loaded, m.gen
	m.mu.Unlock()
	if !loaded.IsZero() && now.Sub(loaded) < policyTTL {
		return p, nil
	}
	fresh, err := m.load(ctx)
	if err != nil {
		if !loaded.IsZero() {
			m.deps.Log.WarnContext(ctx, "reading the federation policy failed; using the last copy", "err", err, "age", now.Sub(loaded))
			return p, nil
		}
		return domain.Policy{}, err
	}
	m.mu.Lock()
	if m.gen == gen {
		m.policy, m.loaded = fresh, now
	}
	m.mu.Unlock()
	return fresh, nil
}

func (m *Moderation) load(ctx context.Context) (domain.Policy, error) {
	blocks, err := m.deps.Store.DomainBlocks(ctx)
	if err != nil {
		return domain.Policy{}, fmt.Errorf("domain blocks: %w", err)
	}
	var allows []domain.DomainAllow
	if m.deps.Mode == domain.FederationAllowlist {
		if allows, err = m.deps.Store.DomainAllows(ctx); err != nil {
			return domain.Policy{}, fmt.Errorf("domain allows: %w", err)
		}
	}
	return domain.NewPolicy(m.deps.Mode, blocks, allows), nil
}

// invalidate makes the next check read the rules again.
func (m *Moderation) invalidate() {
	m.mu.Lock()
	m.loaded = time.Time{}
	m.gen++
	m.mu.Unlock()
}

// Verdict is the policy's verdict for a host (a URL's host[:port]).
func (m *Moderation) Verdict(ctx context.Context, host string) (domain.Verdict, error) {
	p, err := m.Policy(ctx)
	if err != nil {
		return domain.Verdict{}, err
	}
	return p.Of(host), nil
}

// ErrRefusedByPolicy marks what the federation policy refuses: a request
// from, or a fetch or delivery to, a suspended domain, or one not allowed
// in allowlist mode. It wraps domain.ErrForbidden.
var ErrRefusedByPolicy = fmt.Errorf("%w: refused by the federation policy", domain.ErrForbidden)

// Where the policy refuses something, for PolicyObserver.
const (
	RefusedInbox    = "inbox"
	RefusedFetch    = "fetch"
	RefusedDelivery = "delivery"
	RefusedFollow   = "follow"
)

// Refuse returns an error wrapping ErrRefusedByPolicy when the policy
// refuses host, counting the refusal under kind; nil when host may
// federate; and an error wrapping domain.ErrUnavailable when the rules
// cannot be read at all (the caller refuses for now, not for good).
func (m *Moderation) Refuse(ctx context.Context, host, kind string) error {
	if m == nil {
		return nil
	}
	v, err := m.Verdict(ctx, host)
	if err != nil {
		return fmt.Errorf("%w: the federation policy cannot be read: %v", domain.ErrUnavailable, err)
	}
	if !v.Refused() {
		return nil
	}
	if m.deps.Observer != nil {
		m.deps.Observer.Refused(kind)
	}
	return &PolicyRefusal{Host: host, Why: v.Why()}
}

// RefusesDelivery is Refuse for a delivery, as the engine asks it
// (engine.Policy): why nothing may be sent to host, or "" when it may; an
// error when the rules cannot be read.
func (m *Moderation) RefusesDelivery(ctx context.Context, host string) (string, error) {
	err := m.Refuse(ctx, host, RefusedDelivery)
	var r *PolicyRefusal
	switch {
	case errors.As(err, &r):
		return r.Why, nil
	case err != nil:
		return "", err
	}
	return "", nil
}

// PolicyRefusal is Refuse's error: which host, and why ("suspended", "not
// allowed (allowlist mode)"). It wraps ErrRefusedByPolicy.
type PolicyRefusal struct{ Host, Why string }

func (r *PolicyRefusal) Error() string {
	return fmt.Sprintf("%v: %s is %s", ErrRefusedByPolicy, r.Host, r.Why)
}
func (r *PolicyRefusal) Unwrap() error { return ErrRefusedByPolicy }

// Silenced reports whether host is silenced; false when the rules cannot
// be read (Refuse, checked first on every path, has refused by then).
func (m *Moderation) Silenced(ctx context.Context, host string) bool {
	if m == nil {
		return false
	}
	v, err := m.Verdict(ctx, host)
	return err == nil && v.Silenced()
}

// Blocked is what a block did.
type Blocked struct {
	Block domain.DomainBlock
	// JobsEnded and FollowsRemoved count what a suspension ended: queued
	// deliveries to the domain, and follows both ways of its actors.
	JobsEnded      int
	FollowsRemoved int
}

// Block adds a domain block. A suspension also ends the domain's queued
// deliveries as dead ("suspended") in one store operation and removes the
// follows both ways of its actors known here; lifting it later restores
// federation, not those follows.
func (m *Moderation) Block(ctx context.Context, b domain.DomainBlock) (Blocked, error) {
	return m.writeBlock(ctx, b, m.deps.Store.AddDomainBlock, "domain blocked")
}

// UpdateBlock changes an existing block (domain.ErrNotFound if there is
// none); one that becomes a suspension does what Block does for one.
func (m *Moderation) UpdateBlock(ctx context.Context, b domain.DomainBlock) (Blocked, error) {
	return m.writeBlock(ctx, b, m.deps.Store.UpdateDomainBlock, "domain block changed")
}

// writeBlock checks b, stores it with write, logs what was done, and does
// what the block does.
func (m *Moderation) writeBlock(ctx context.Context, b domain.DomainBlock, write func(context.Context, domain.DomainBlock) error, done string) (Blocked, error) {
	if err := b.Check(); err != nil {
		return Blocked{}, err
	}
	if err := write(ctx, b); err != nil {
		return Blocked{}, err
	}
	m.invalidate()
	m.deps.Log.InfoContext(ctx, done, "domain", b.Domain, "severity", b.Severity)
	return m.afterBlock(ctx, b)
}

func (m *Moderation) afterBlock(ctx context.Context, b domain.DomainBlock) (Blocked, error) {
	res := Blocked{Block: b}
	if b.Severity != domain.SeveritySuspend {
		return res, nil
	}
	n, err := m.deps.JobAdmin.EndDomainJobs(ctx, b.Domain, "suspended", m.deps.Clock.Now())
	if err != nil {
		return res, fmt.Errorf("end the deliveries to %s: %w", b.Domain, err)
	}
	res.JobsEnded = n
	if res.FollowsRemoved, err = m.removeFollows(ctx, b.Domain); err != nil {
		return res, err
	}
	m.deps.Log.InfoContext(ctx, "domain suspended", "domain", b.Domain, "jobs_ended", res.JobsEnded, "follows_removed", res.FollowsRemoved)
	return res, nil
}

// removeFollows removes every follow, both ways, of the cached actors on
// the domain, a page of actors at a time.
func (m *Moderation) removeFollows(ctx context.Context, d string) (int, error) {
	total, after := 0, ""
	for {
		uris, err := m.deps.Foreign.OnDomain(ctx, d, after, 500)
		if err != nil {
			return total, fmt.Errorf("actors on %s: %w", d, err)
		}
		for _, u := range uris {
			n, err := m.deps.Followers.RemoveActor(ctx, u)
			if err != nil {
				return total, fmt.Errorf("follows of %s: %w", u, err)
			}
			total += n
		}
		if len(uris) < 500 {
			return total, nil
		}
		after = uris[len(uris)-1]
	}
}

// Unblock lifts a domain's block; domain.ErrNotFound if there is none.
func (m *Moderation) Unblock(ctx context.Context, d string) error {
	return m.remove(ctx, d, m.deps.Store.RemoveDomainBlock, "domain block lifted")
}

// Allow lets a domain federate in allowlist mode.
func (m *Moderation) Allow(ctx context.Context, a domain.DomainAllow) error {
	if err := m.deps.Store.AddDomainAllow(ctx, a); err != nil {
		return err
	}
	m.invalidate()
	m.deps.Log.InfoContext(ctx, "domain allowed", "domain", a.Domain)
	return nil
}

// Disallow removes a domain's allow; domain.ErrNotFound if there is none.
func (m *Moderation) Disallow(ctx context.Context, d string) error {
	return m.remove(ctx, d, m.deps.Store.RemoveDomainAllow, "domain allow removed")
}

// remove removes a domain's entry of the policy with remove, and logs
// done: what Unblock and Disallow share.
func (m *Moderation) remove(ctx context.Context, d string, remove func(context.Context, string) error, done string) error {
	nd, err := domain.NormalizeDomain(d)
	if err != nil {
		return err
	}
	if err := remove(ctx, nd); err != nil {
		return err
	}
	m.invalidate()
	m.deps.Log.InfoContext(ctx, done, "domain", nd)
	return nil
}

// Blocks lists the domain blocks, by domain.
func (m *Moderation) Blocks(ctx context.Context) ([]domain.DomainBlock, error) {
	return m.deps.Store.DomainBlocks(ctx)
}

// Allows lists the domain allows, by domain.
func (m *Moderation) Allows(ctx context.Context) ([]domain.DomainAllow, error) {
	return m.deps.Store.DomainAllows(ctx)
}

// RefusedByPolicy reports whether err is a refusal of the federation
// policy.
func RefusedByPolicy(err error) bool { return errors.Is(err, ErrRefusedByPolicy) }
