package application

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/heraldfed/herald/domain"
)

// Persona deletion tuning.
const (
	// PersonaDeletionEvery is how often a process looks for deletions to
	// finish (a deletion begun here starts at once: DeletePersonaHandler
	// wakes it). Most passes find a deletion waiting for its Delete's last
	// deliveries, which is one count of its jobs.
	PersonaDeletionEvery = time.Minute
	// personaDeletionBatch bounds the deletions one pass takes up.
	personaDeletionBatch = 100
	// followedPage is how many of a deleted persona's followed actors are
	// read and enqueued at once.
	followedPage = 1000
)

// PersonaDeletionsHandler finishes the deletions DeletePersonaHandler
// began, each in steps that are safe to run again, so a pass that dies
// half way (or two processes running the same one) neither loses a step
// nor sends anything twice:
//
//  1. The name's reservation is marked deleted (if the beginning did not).
//  2. Delete{Person} (id: the actor URI + "#delete", as Mastodon's) is
//     enqueued to the inboxes of the actors the persona follows or asked
//     to follow (their servers drop the follow), then fanned out to every
//     accepted follower through the streamed, recorded fan-out posts use
//     (FanOutHandler: a crash mid-way is resumed after its cursor by any
//     process). Dedupe keys make repeats no-ops.
//  3. Once the fan-out is recorded done (every follower's inbox has its
//     job), the persona's posts, direct posts, boosts and reactions
//     (PostStore.DeleteActorContent), its follows both ways and its
//     notifications (and those naming it) go. Not
//     before: the fan-out, and its resumption, read the followers.
//  4. Once no delivery of the Delete is queued or leased (each succeeded,
//     or died after its attempts), the avatar goes, and its key with it.
//     Until then ActorStore.AvatarByID still hands the key to the engine:
//     a job of the Delete retried two days later must still be signed by
//     the persona, or the receiving server could not verify it. Keeping
//     the key in the retired avatar, rather than copying it into a record
//     of its own, keeps one place that holds private keys.
//
// The name's reservation stays, marked deleted, for good (SPEC §3): its
// actor URL and WebFinger answer 410 with a Tombstone, and no one can
// sign up with the name. A persona has no tokens of its own (an
// account's tokens sign in all its personas), so none go.
type PersonaDeletionsHandler struct {
	deps    Deps
	urls    URLs
	fanOut  FanOutHandler
	enqueue EnqueueHandler
	local   func(uri string) bool
	wake    chan struct{}
}

// Wake starts a pass at once (a deletion was just begun).
func (h PersonaDeletionsHandler) Wake() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run runs a pass now, on every Wake and every PersonaDeletionEvery,
// until ctx ends.
func (h PersonaDeletionsHandler) Run(ctx context.Context) {
	for {
		if _, err := h.Finish(ctx); err != nil && ctx.Err() == nil {
			h.deps.Log.Warn("persona deletions", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-h.deps.Clock.After(PersonaDeletionEvery):
		}
	}
}

// Finish takes every begun deletion a step as far as it can go now, a
// page of them at a time (deletions that wait for their last deliveries
// never hide the ones after them), and returns how many finished (their
// avatar and key removed).
func (h PersonaDeletionsHandler) Finish(ctx context.Context) (int, error) {
	n, after := 0, ""
	var errs []error
	for ctx.Err() == nil {
		retired, err := h.deps.Actors.RetiredAvatars(ctx, after, personaDeletionBatch)
		if err != nil {
			return n, errors.Join(append(errs, fmt.Errorf("retired personas: %w", err))...)
		}
		for _, a := range retired {
			if ctx.Err() != nil {
				break
			}
			done, err := h.advance(ctx, a)
			if err != nil {
				errs = append(errs, fmt.Errorf("deletion of %s: %w", a.Name, err))
				continue
			}
			if done {
				n++
			}
		}
		if len(retired) < personaDeletionBatch {
			break
		}
		after = retired[len(retired)-1].ID
	}
	return n, errors.Join(errs...)
}

// deleteActivity is a deleted persona's Delete{Person}: its id is
// derived from the actor, so every pass (and every process) makes the
// same activity, the same dedupe keys and the same fan-out record.
func (h PersonaDeletionsHandler) deleteActivity(actor string) Activity {
	return Activity{ID: actor + "#delete", Type: "Delete", Actor: actor, To: []string{ASPublic}, Object: actor}
}

// advance takes one deletion as far as it goes now; done when the avatar
// is removed.
func (h PersonaDeletionsHandler) advance(ctx context.Context, a domain.Avatar) (done bool, err error) {
	d := h.deps
	if err := h.markName(ctx, a); err != nil {
		return false, err
	}
	actor := h.urls.Persona(a.Name)
	act := h.deleteActivity(actor)
	payload, err := act.Marshal()
	if err != nil {
		return false, err
	}
	sent, err := h.announce(ctx, a, act, payload)
	if err != nil || !sent {
		return false, err
	}
	// Every inbox has its job: what the persona left here goes.
	posts, err := d.Posts.DeleteActorContent(ctx, actor)
	if err != nil {
		return false, fmt.Errorf("posts: %w", err)
	}
	follows, err := d.Followers.RemoveActor(ctx, actor)
	if err != nil {
		return false, fmt.Errorf("follows: %w", err)
	}
	notes := 0
	if d.Notifications != nil {
		// Its own notifications, and those its polls gave their voters.
		for _, drop := range []func(context.Context, string) (int, error){d.Notifications.ClearNotifications, d.Notifications.DeleteActorNotifications} {
			n, err := drop(ctx, actor)
			if err != nil {
				return false, fmt.Errorf("notifications: %w", err)
			}
			notes += n
		}
	}
	if posts > 0 || follows > 0 || notes > 0 {
		d.Log.InfoContext(ctx, "deleted persona's content removed", "name", a.Name, "posts", posts, "follows", follows, "notifications", notes)
	}
	if settled, err := h.settled(ctx, payload); err != nil || !settled {
		return false, err
	}
	if err := d.Actors.DeleteAvatar(ctx, a.ID); err != nil && !errors.Is(err, domain.ErrNotFound) {
		return false, fmt.Errorf("remove avatar: %w", err)
	}
	d.Log.InfoContext(ctx, "persona deleted; its key is gone, its name stays reserved", "name", a.Name)
	return true, nil
}

// markName marks the name's reservation deleted. A persona stored before
// reservations existed may have none: it gets one, marked.
func (h PersonaDeletionsHandler) markName(ctx context.Context, a domain.Avatar) error {
	d := h.deps
	err := d.Names.MarkDeleted(ctx, a.Name, a.ID, a.DeletedAt)
	if !errors.Is(err, domain.ErrNotFound) {
		return err
	}
	switch _, gerr := d.Names.Get(ctx, a.Name); {
	case gerr == nil:
		// Held by another owner: nothing of ours to mark (and nothing to
		// take from it).
		d.Log.WarnContext(ctx, "a deleted persona's name is held by another owner", "name", a.Name)
		return nil
	case !errors.Is(gerr, domain.ErrNotFound):
		return gerr
	}
	rn, err := domain.NewReservedName(a.Name, domain.NameKindPersona, a.ID, a.CreatedAt)
	if err != nil {
		return err
	}
	if err := d.Names.Reserve(ctx, rn); err != nil && !errors.Is(err, domain.ErrNameTaken) {
		return err
	}
	return d.Names.MarkDeleted(ctx, a.Name, a.ID, a.DeletedAt)
}

// announce enqueues the Delete to the followed actors' inboxes and fans it
// out to the followers; sent is true once the fan-out is recorded done.
// A fan-out another process runs (or will resume) is left to it.
func (h PersonaDeletionsHandler) announce(ctx context.Context, a domain.Avatar, act Activity, payload []byte) (sent bool, err error) {
	d := h.deps
	if d.FanOuts != nil {
		f, err := d.FanOuts.Get(ctx, act.ID)
		switch {
		case err == nil:
			return f.Done, nil
		case !errors.Is(err, domain.ErrNotFound):
			return false, fmt.Errorf("fan-out record: %w", err)
		}
	}
	keyID := h.urls.Key(act.Actor)
	followed, err := h.toFollowed(ctx, a, act, keyID, payload)
	if err != nil {
		return false, err
	}
	res, err := h.fanOut.Start(ctx, FanOutOf{ActivityID: act.ID, ActorURI: act.Actor, SenderID: a.ID, KeyID: keyID, Payload: payload})
	if err != nil {
		return false, fmt.Errorf("fan-out: %w", err)
	}
	d.Log.InfoContext(ctx, "Delete of a persona sent out", "name", a.Name, "followed_inboxes", followed,
		"follower_inboxes", res.Inboxes, "queued", res.Queued)
	if d.FanOuts == nil {
		return true, nil // no record: Start ran it to the end
	}
	f, err := d.FanOuts.Get(ctx, act.ID)
	if err != nil {
		return false, fmt.Errorf("fan-out record: %w", err)
	}
	return f.Done, nil
}

// toFollowed enqueues the Delete to the inboxes (shared ones preferred) of
// the remote actors the persona follows or asked to follow, a page at a
// time; it returns how many inboxes it submitted.
func (h PersonaDeletionsHandler) toFollowed(ctx context.Context, a domain.Avatar, act Activity, keyID string, payload []byte) (int, error) {
	d := h.deps
	n, after := 0, ""
	for {
		page, err := d.Followers.FollowedURIs(ctx, act.Actor, after, followedPage)
		if err != nil {
			return n, fmt.Errorf("followed actors: %w", err)
		}
		remote := make([]string, 0, len(page))
		for _, uri := range page {
			if !h.local(uri) {
				remote = append(remote, uri)
			}
		}
		if len(remote) > 0 {
			actors, err := d.Foreign.InboxesOf(ctx, remote)
			if err != nil {
				return n, fmt.Errorf("followed actors' inboxes: %w", err)
			}
			inboxes := make([]string, 0, len(actors))
			for _, fa := range actors {
				inboxes = append(inboxes, fa.DeliveryInbox())
			}
			inboxes = distinct(inboxes)
			now := d.Clock.Now()
			jobs := make([]domain.Job, 0, len(inboxes))
			for _, inbox := range inboxes {
				j, err := domain.NewJob(d.IDs.NewID(), act.ID, inbox, a.ID, keyID, payload, now)
				if err != nil {
					d.Log.WarnContext(ctx, "skipping an inbox that is not a valid URL", "inbox", inbox, "err", err)
					continue
				}
				jobs = append(jobs, j)
			}
			if _, err := h.enqueue.Handle(ctx, jobs); err != nil {
				return n, err
			}
			n += len(jobs)
		}
		if len(page) < followedPage {
			return n, nil
		}
		after = page[len(page)-1]
	}
}

// settled reports whether every delivery of the Delete is over (none
// queued or leased). Without a JobAdmin to count them the key is kept.
func (h PersonaDeletionsHandler) settled(ctx context.Context, payload []byte) (bool, error) {
	if h.deps.JobAdmin == nil {
		return false, nil
	}
	counts, err := h.deps.JobAdmin.CountsOfBody(ctx, domain.BodyOf(payload))
	if err != nil {
		return false, fmt.Errorf("deliveries of the Delete: %w", err)
	}
	return counts[domain.JobQueued]+counts[domain.JobLeased] == 0, nil
}
