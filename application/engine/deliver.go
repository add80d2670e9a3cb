package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// courier makes one job's attempt: what it needs to sign, send and decide.
// It keeps no state of its own; the host policy it consults and feeds is
// hostPolicy's.
type courier struct {
	deliverer ports.Deliverer
	keys      SigningKeys
	policy    Policy // nil: federate with everyone
	hosts     *hostPolicy
	clock     ports.Clock
	rnd       ports.Random
	obs       ports.EngineObserver
	log       *slog.Logger
	// retryIn is when a job released for our own failure (the policy or
	// a key could not be read) is tried again: the next poll.
	retryIn time.Duration
}

// deliver runs one leased job's attempt and returns what is to be recorded:
// it is not attempted while its host is quarantined (the job waits, its
// attempts untouched), else it is delivered and decided by the rules of
// SPEC §2 (domain.Decide). Nothing is written here: the completer writes the
// result, fenced by the job's lease token, with others in one batch.
func (c *courier) deliver(ctx context.Context, job domain.Job) result {
	if len(job.Payload) == 0 {
		// The store lost the activity body (or the job was enqueued
		// referring to one it never had): nothing can ever be sent.
		return dead(job, missingBody(job), c.clock.Now())
	}
	if why, err := c.refuses(ctx, job.Host); why != "" {
		// Suspended, or not allowed: nothing is sent there (SPEC §11).
		return dead(job, why, c.clock.Now())
	} else if err != nil {
		// The policy cannot be read: send nothing for now, spend nothing.
		jobLog(c.log, job).Error("federation policy unavailable; job released", "err", err)
		return release(job, c.clock.Now().Add(c.retryIn), "federation policy unavailable")
	}
	if until, q := c.hosts.quarantinedUntil(ctx, job.Host); q {
		return release(job, until, "host quarantined")
	}
	key, err := c.keys.SigningKey(ctx, job.SenderID)
	if errors.Is(err, domain.ErrNotFound) {
		// The sending actor is gone: nothing can ever sign this job.
		return dead(job, "sender "+job.SenderID+" no longer exists", c.clock.Now())
	}
	if err != nil {
		// Our own store failed; that is not the job's fault, so it spends
		// no attempt.
		jobLog(c.log, job).Error("signing key unavailable; job released", "err", err)
		return release(job, c.clock.Now().Add(c.retryIn), "signing key unavailable")
	}

	started := c.clock.Now()
	wallStart := time.Now()
	outcome := c.deliverer.Deliver(ctx, ports.Delivery{
		Inbox: job.Inbox, Payload: job.Payload, KeyID: job.KeyID, PrivateKeyPEM: key,
	})
	c.obs.Delivered(job.Host, outcome, time.Since(wallStart))
	if ctx.Err() != nil {
		// Shutdown cut the attempt off: the remote may or may not have it,
		// but it did not fail, so it spends no attempt.
		return release(job, c.clock.Now(), "shutdown cut the attempt off")
	}
	now := c.clock.Now()
	if refusedSignature(outcome) {
		if c.staleKey(ctx, job, key) {
			// Signed with a key the actor no longer publishes: its key was
			// rotated by another process within KeyCacheTTL. The server was
			// right to refuse; the job goes again at once with the current
			// key, spending no attempt (see application.RotateKeyHandler).
			jobLog(c.log, job).Info("signature refused with a replaced key; job sent again with the new one", "status", outcome.Status)
			return release(job, now, "signed with a replaced key")
		}
		if c.justRotated(ctx, job, now) {
			// Refused right after a rotation: the server may not have read
			// the Update with the new key yet. Retry on the curve (its first
			// step, 16 s, leaves time for the Update) instead of ending.
			outcome.Kind = domain.OutcomeRetryable
			outcome.Reason = fmt.Sprintf("refused (%d) within %s of the sender's key rotation", outcome.Status, KeyRotationGrace)
		}
	}
	d := domain.Decide(job.Attempts, outcome, now, c.rnd.Float64())
	return decided(job, outcome, d, now, now.Sub(started))
}

// refuses asks the federation policy whether host may be sent to: why it
// may not ("suspended", "not allowed (allowlist mode)"), or "".
func (c *courier) refuses(ctx context.Context, host string) (string, error) {
	if c.policy == nil {
		return "", nil
	}
	return c.policy.RefusesDelivery(ctx, host)
}

// missingBody is the last error of a job whose activity body is gone.
func missingBody(job domain.Job) string {
	if job.BodyID == "" {
		return "activity body missing: the job has no payload"
	}
	return "activity body " + job.BodyID + " missing from the store"
}

// refusedSignature reports whether the remote refused the delivery as
// servers refuse a signature they cannot verify (401 or 403). Only such
// refusals cost the key reads below.
func refusedSignature(o domain.Outcome) bool {
	return o.Status == http.StatusUnauthorized || o.Status == http.StatusForbidden
}

// staleKey reports whether a refused delivery was signed with a key the
// sender no longer has: the key read afresh from the store differs from
// the one used.
func (c *courier) staleKey(ctx context.Context, job domain.Job, used string) bool {
	r, ok := c.keys.(keyRefresher)
	if !ok {
		return false
	}
	fresh, err := r.Refresh(ctx, job.SenderID)
	return err == nil && fresh != used
}

// KeyRotationGrace is how long after a sender's key rotation a refused
// delivery (401, 403) is retried rather than final: the time its
// followers' servers take to read the Update{Person} with the new key,
// which the retry curve gives about five attempts.
const KeyRotationGrace = 10 * time.Minute

// justRotated reports whether a refused delivery's sender rotated its key
// within KeyRotationGrace.
func (c *courier) justRotated(ctx context.Context, job domain.Job, now time.Time) bool {
	r, ok := c.keys.(rotationTimes)
	if !ok {
		return false
	}
	at, err := r.RotatedAt(ctx, job.SenderID)
	return err == nil && !at.IsZero() && now.Sub(at) < KeyRotationGrace
}
