package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// deliver runs one leased job's attempt and returns what is to be recorded:
// it is not attempted while its host is quarantined (the job waits, its
// attempts untouched), else it is delivered and decided by the rules of
// SPEC §2 (domain.Decide). Nothing is written here: the completer writes the
// result, fenced by the job's lease token, with others in one batch.
func (e *Engine) deliver(ctx context.Context, job domain.Job) result {
	if len(job.Payload) == 0 {
		// The store lost the activity body (or the job was enqueued
		// referring to one it never had): nothing can ever be sent.
		return e.dead(job, missingBody(job), e.clock.Now())
	}
	if why, err := e.refuses(ctx, job.Host); why != "" {
		// Suspended, or not allowed: nothing is sent there (SPEC §11).
		return e.dead(job, why, e.clock.Now())
	} else if err != nil {
		// The policy cannot be read: send nothing for now, spend nothing.
		e.jobLog(job).Error("federation policy unavailable; job released", "err", err)
		return e.release(job, e.clock.Now().Add(e.cfg.PollEvery), "federation policy unavailable")
	}
	if until, q := e.quarantinedUntil(ctx, job.Host); q {
		return e.release(job, until, "host quarantined")
	}
	key, err := e.keys.SigningKey(ctx, job.SenderID)
	if errors.Is(err, domain.ErrNotFound) {
		// The sending actor is gone: nothing can ever sign this job.
		return e.dead(job, "sender "+job.SenderID+" no longer exists", e.clock.Now())
	}
	if err != nil {
		// Our own store failed; that is not the job's fault, so it spends
		// no attempt.
		e.jobLog(job).Error("signing key unavailable; job released", "err", err)
		return e.release(job, e.clock.Now().Add(e.cfg.PollEvery), "signing key unavailable")
	}

	started := e.clock.Now()
	wallStart := time.Now()
	outcome := e.deliverer.Deliver(ctx, ports.Delivery{
		Inbox: job.Inbox, Payload: job.Payload, KeyID: job.KeyID, PrivateKeyPEM: key,
	})
	e.obs.Delivered(job.Host, outcome, time.Since(wallStart))
	if ctx.Err() != nil {
		// Shutdown cut the attempt off: the remote may or may not have it,
		// but it did not fail, so it spends no attempt.
		return e.release(job, e.clock.Now(), "shutdown cut the attempt off")
	}
	now := e.clock.Now()
	if stale := e.staleKey(ctx, job, outcome, key); stale {
		// Signed with a key the actor no longer publishes: its key was
		// rotated by another process within KeyCacheTTL. The server was
		// right to refuse; the job goes again at once with the current
		// key, spending no attempt (see RotateKeyHandler).
		e.jobLog(job).Info("signature refused with a replaced key; job sent again with the new one", "status", outcome.Status)
		return e.release(job, now, "signed with a replaced key")
	}
	if e.justRotated(ctx, job, outcome, now) {
		// Refused right after a rotation: the server may not have read
		// the Update with the new key yet. Retry on the curve (its first
		// step, 16 s, leaves time for the Update) instead of ending.
		outcome.Kind = domain.OutcomeRetryable
		outcome.Reason = fmt.Sprintf("refused (%d) within %s of the sender's key rotation", outcome.Status, KeyRotationGrace)
	}
	d := domain.Decide(job.Attempts, outcome, now, e.rnd.Float64())
	return e.decided(job, outcome, d, now, now.Sub(started))
}

// refuses asks the federation policy whether host may be sent to: why it
// may not ("suspended", "not allowed (allowlist mode)"), or "".
func (e *Engine) refuses(ctx context.Context, host string) (string, error) {
	if e.policy == nil {
		return "", nil
	}
	return e.policy.RefusesDelivery(ctx, host)
}

// missingBody is the last error of a job whose activity body is gone.
func missingBody(job domain.Job) string {
	if job.BodyID == "" {
		return "activity body missing: the job has no payload"
	}
	return "activity body " + job.BodyID + " missing from the store"
}

// staleKey reports whether a refused delivery (401 or 403: how servers
// answer a signature they cannot verify) was signed with a key the
// sender no longer has: the key read afresh from the store differs from
// the one used. It costs a store read only for such refusals.
func (e *Engine) staleKey(ctx context.Context, job domain.Job, o domain.Outcome, used string) bool {
	if o.Status != http.StatusUnauthorized && o.Status != http.StatusForbidden {
		return false
	}
	r, ok := e.keys.(keyRefresher)
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
// within KeyRotationGrace. It costs a store read only for such refusals.
func (e *Engine) justRotated(ctx context.Context, job domain.Job, o domain.Outcome, now time.Time) bool {
	if o.Status != http.StatusUnauthorized && o.Status != http.StatusForbidden {
		return false
	}
	r, ok := e.keys.(rotationTimes)
	if !ok {
		return false
	}
	at, err := r.RotatedAt(ctx, job.SenderID)
	return err == nil && !at.IsZero() && now.Sub(at) < KeyRotationGrace
}
