package application

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
)

// ActorResolver finds remote actors: in the ForeignActorStore while the
// cached copy is fresh, else through the Dereferencer, signed as the
// instance actor, and cached by cacheActor, the one write path into the
// cache. It is the Resolver publishing uses, and what the inboxes find
// signers' keys with.
type ActorResolver struct {
	core  *fedCore
	deref Dereferencer
	// failing pauses key fetches to hosts that failed several of them, so
	// a flood of unknown key ids cannot make Herald send a GET for each.
	failing *failingHosts
}

var _ Resolver = (*ActorResolver)(nil)

// minRefetch is how soon after a fetch an actor is fetched again because
// a signature did not verify with its cached key. A real key rotation is
// seen at the next request after that; a stream of forged signatures
// naming a victim's key id cannot make Herald GET the victim's actor for
// each one.
const minRefetch = time.Minute

// Resolve implements Resolver: the cached actor, fetched when missing or
// stale. A stale copy is still used when the refresh fails, so a remote
// that is down for a while does not make its actor unknown. A deleted
// actor (tombstoned) is not found.
func (r *ActorResolver) Resolve(ctx context.Context, actorURI string) (domain.ForeignAvatar, error) {
	d := r.core.deps
	if r.core.local(actorURI) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %s is a local actor", domain.ErrInvalidInput, clip(actorURI))
	}
	cached, err := d.Foreign.ByActorURI(ctx, actorURI)
	if err == nil && !cached.Stale(d.Clock.Now()) {
		return cached, nil
	}
	if err != nil && !notFound(err) {
		return domain.ForeignAvatar{}, err
	}
	if err != nil {
		if terr := r.core.deleted(ctx, actorURI, actorURI); terr != nil {
			return domain.ForeignAvatar{}, terr
		}
	}
	fa, ferr := r.fetch(ctx, actorURI, "")
	if ferr != nil {
		if err == nil {
			d.Log.WarnContext(ctx, "refreshing a stale remote actor failed; using the cached copy", "actor", actorURI, "err", ferr)
			return cached, nil
		}
		return domain.ForeignAvatar{}, ferr
	}
	return fa, nil
}

// ByKeyID finds the actor whose key signed a request. fresh says whether
// the actor was fetched just now (so refetching it cannot help).
func (r *ActorResolver) ByKeyID(ctx context.Context, keyID string) (fa domain.ForeignAvatar, fresh bool, err error) {
	d := r.core.deps
	if !httpURL(keyID) {
		return domain.ForeignAvatar{}, false, fmt.Errorf("%w: keyId %q is not an http(s) URI", domain.ErrUnauthorized, clip(keyID))
	}
	if r.core.local(keyID) {
		return domain.ForeignAvatar{}, false, fmt.Errorf("%w: keyId %s is one of ours", domain.ErrUnauthorized, clip(keyID))
	}
	cached, err := d.Foreign.ByKeyID(ctx, keyID)
	switch {
	case err == nil && !cached.Stale(d.Clock.Now()):
		return cached, false, nil
	case err == nil:
		fa, ferr := r.keyFetch(ctx, keyID, func() (domain.ForeignAvatar, error) { return r.fetch(ctx, cached.ActorURI, keyID) })
		if ferr == nil {
			return fa, true, nil
		}
		if isCacheError(ferr) {
			return domain.ForeignAvatar{}, false, ferr
		}
		return cached, false, nil
	case !notFound(err):
		return domain.ForeignAvatar{}, false, cacheError{err}
	}
	if terr := r.core.deleted(ctx, keyID, keyID); terr != nil {
		return domain.ForeignAvatar{}, false, fmt.Errorf("%w: key %s: %w", domain.ErrUnauthorized, clip(keyID), terr)
	}
	fa, err = r.keyFetch(ctx, keyID, func() (domain.ForeignAvatar, error) {
		// Another request of the same new actor may have cached it while
		// this one waited for a slot.
		if fa, err := d.Foreign.ByKeyID(ctx, keyID); err == nil {
			return fa, nil
		}
		return r.fetchKey(ctx, keyID)
	})
	return fa, true, keyError(keyID, err)
}

// Refetch fetches the actor again, whatever the cache holds: the key it
// signed with no longer verifies, so it may have rotated it. Errors are as
// ByKeyID's. Within minRefetch of the last fetch it fetches nothing and
// answers domain.ErrUnavailable: a sender that really rotated its key
// delivers again later and is verified then, and forged signatures naming
// a victim's key id do not make Herald fetch the victim's actor for each.
func (r *ActorResolver) Refetch(ctx context.Context, cached domain.ForeignAvatar, keyID string) (domain.ForeignAvatar, error) {
	if since := r.core.deps.Clock.Now().Sub(cached.FetchedAt); since < minRefetch {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: key %s does not verify and its actor was fetched %s ago", domain.ErrUnavailable, clip(keyID), since.Round(time.Second))
	}
	fa, err := r.keyFetch(ctx, keyID, func() (domain.ForeignAvatar, error) { return r.fetch(ctx, cached.ActorURI, keyID) })
	return fa, keyError(keyID, err)
}

// Update caches the actor document an actor sent about itself (its
// Update{Person}), through cacheActor with the verified signer as the
// origin; an embedded document too incomplete to cache is fetched from
// the actor's server instead.
func (r *ActorResolver) Update(ctx context.Context, signer string, raw []byte) (domain.ForeignAvatar, error) {
	ra, err := DecodeActor(raw, "")
	if err != nil {
		return r.fetch(ctx, signer, "")
	}
	if ra.ID != signer {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: Update of actor %q by another actor", domain.ErrForbidden, clip(ra.ID))
	}
	return r.core.cacheActor(ctx, ra, signer)
}

// keyFetch runs one fetch of a signer's key in one of its host's key
// fetch slots, unless that host's key fetches are paused, and records how
// the host did: a failure that is the remote's (not our store's) pauses
// further key fetches there, a success ends the pause.
func (r *ActorResolver) keyFetch(ctx context.Context, keyID string, fetch func() (domain.ForeignAvatar, error)) (domain.ForeignAvatar, error) {
	host := hostOf(keyID)
	release, err := r.failing.acquire(ctx, host)
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: waiting to fetch key %s: %v", domain.ErrUnavailable, clip(keyID), err)
	}
	defer release()
	if wait := r.failing.take(host); wait > 0 {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: key fetches to %s are paused for %s after failures", domain.ErrUnavailable, host, wait.Round(time.Second))
	}
	fa, err := fetch()
	switch {
	case err == nil:
		r.failing.succeeded(host)
	case isCacheError(err):
		r.failing.refund(host)
	default:
		if wait := r.failing.paused(host); wait > 0 {
			r.core.deps.Log.InfoContext(ctx, "key fetches failed; pausing key fetches to the host", "host", host, "key_id", clip(keyID), "pause", wait, "err", err)
		} else {
			r.core.deps.Log.DebugContext(ctx, "key fetch failed", "host", host, "key_id", clip(keyID), "err", err)
		}
	}
	return fa, err
}

// cacheError marks a failure of our own stores, as opposed to a remote's
// answer: the first is our fault and worth a retry by the sender, the
// second means the signature cannot be checked.
type cacheError struct{ err error }

func (e cacheError) Error() string { return e.err.Error() }
func (e cacheError) Unwrap() error { return e.err }

func isCacheError(err error) bool {
	var ce cacheError
	return errors.As(err, &ce)
}

// keyError makes every failure to obtain a signer's key from its server
// domain.ErrUnauthorized (the signature cannot be verified), keeping the
// cause (domain.ErrNotFound for a gone actor) for errors.Is. Two kinds pass
// through unchanged, because they are not the sender's fault and a final
// 401 would lose the activity (GoToSocial and Mastodon never retry a 4xx):
// our own stores' failures, and domain.ErrUnavailable (our network, the
// key server's 5xx, a timeout), which the inbox answers with 503 and
// Retry-After so that the sender delivers again later.
func keyError(keyID string, err error) error {
	if err == nil || isCacheError(err) {
		return err
	}
	if errors.Is(err, domain.ErrUnauthorized) {
		return err
	}
	if errors.Is(err, domain.ErrUnavailable) {
		return fmt.Errorf("key %s could not be fetched now: %w", clip(keyID), err)
	}
	return fmt.Errorf("%w: key %s: %w", domain.ErrUnauthorized, clip(keyID), err)
}

// Account resolves "user@host" by WebFinger to the actor it names.
func (r *ActorResolver) Account(ctx context.Context, user, host string) (domain.ForeignAvatar, error) {
	if user == "" || host == "" || strings.ContainsAny(user+host, "/?#@ ") {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %q is not user@host", domain.ErrInvalidInput, clip(user+"@"+host))
	}
	scheme := NewURLs(host).Scheme
	q := url.Values{"resource": {"acct:" + user + "@" + host}}
	u := scheme + "://" + host + "/.well-known/webfinger?" + q.Encode()
	if !httpURL(u) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: host %q", domain.ErrInvalidInput, clip(host))
	}
	f, err := r.core.deps.Fetcher.Fetch(ctx, FetchRequest{URL: u, Accept: acceptJRD})
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("webfinger %s@%s: %w", user, host, err)
	}
	// WebFinger only points: the actor it names is fetched, and judged,
	// from its own host.
	actor, err := decodeJRD(f.Body)
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("webfinger %s@%s: %w", user, host, err)
	}
	return r.Resolve(ctx, actor)
}

// fetchKey fetches the document at a key id. Servers serve three shapes
// there: the full actor (Mastodon's ".../users/x#main-key"), a bare key
// {"id","owner","publicKeyPem"}, or a minimal actor whose id is the full
// actor's (GoToSocial's ".../users/x/main-key"), which the Dereferencer
// fetches again by that id. A document with an inbox is taken as the
// actor; from a bare key, the key names its owner, whose full actor is
// then fetched: the inbox needs it (an Accept goes to its inbox), and it
// must publish the same key, so a key document cannot speak for an actor
// that does not claim it.
func (r *ActorResolver) fetchKey(ctx context.Context, keyID string) (domain.ForeignAvatar, error) {
	docURL, _, _ := strings.Cut(keyID, "#")
	doc, err := r.deref.fetch(ctx, docURL)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	if owner := keyDocumentOwner(doc.Body, keyID); owner != "" {
		if !sameHost(owner, doc.URL) {
			return domain.ForeignAvatar{}, fmt.Errorf("%w: key %s names an owner on another host", domain.ErrUnauthorized, clip(keyID))
		}
		return r.fetch(ctx, owner, keyID)
	}
	return r.cacheDocument(ctx, doc, keyID)
}

// fetch GETs an actor and caches it. With keyID set, the actor must
// publish that key.
func (r *ActorResolver) fetch(ctx context.Context, actorURI, keyID string) (domain.ForeignAvatar, error) {
	if !httpURL(actorURI) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %q is not an http(s) URI", domain.ErrInvalidInput, clip(actorURI))
	}
	if r.core.local(actorURI) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %s is a local actor", domain.ErrInvalidInput, clip(actorURI))
	}
	doc, err := r.deref.fetch(ctx, actorURI)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	return r.cacheDocument(ctx, doc, keyID)
}

// cacheDocument decodes a fetched actor and caches it; the Dereferencer
// vouched that doc.URL's host answered for it.
func (r *ActorResolver) cacheDocument(ctx context.Context, doc Document, keyID string) (domain.ForeignAvatar, error) {
	ra, err := DecodeActor(doc.Body, keyID)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	return r.core.cacheActor(ctx, ra, doc.URL)
}

// cacheActor is the one write into the remote-actor cache (SPEC §10
// "Keys"): a fetched actor (first contact, refresh, refetch) and an actor's
// Update of itself both come here, with the origin that vouches for the
// document (the URL that answered it, or the verified signer of the
// Update). An actor is cached only when it lives on that origin's host,
// is not one of ours, was not deleted, and its key id is on its own host
// and held by no other actor (the store enforces the last, so that two
// actors claiming one key at once cannot both win). A refused copy changes
// nothing.
func (c *fedCore) cacheActor(ctx context.Context, ra RemoteActor, origin string) (domain.ForeignAvatar, error) {
	d := c.deps
	switch {
	case !sameHost(ra.ID, origin):
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %s answered for actor %s on another host", domain.ErrForbidden, clip(origin), clip(ra.ID))
	case !sameHost(ra.KeyID, ra.ID):
		return domain.ForeignAvatar{}, fmt.Errorf("%w: actor %s claims key %s, which is not on its host", domain.ErrForbidden, clip(ra.ID), clip(ra.KeyID))
	case c.local(ra.ID) || c.local(ra.KeyID):
		return domain.ForeignAvatar{}, fmt.Errorf("%w: remote document claims local actor %s", domain.ErrForbidden, clip(ra.ID))
	}
	if err := c.deleted(ctx, ra.ID, ra.ID); err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %w", domain.ErrForbidden, err)
	}
	fa := ra.Avatar(d.Clock.Now())
	if err := d.Foreign.Upsert(ctx, fa); errors.Is(err, domain.ErrAlreadyExists) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: key %s belongs to another actor than %s", domain.ErrForbidden, clip(fa.PublicKeyID), clip(fa.ActorURI))
	} else if err != nil {
		return domain.ForeignAvatar{}, cacheError{fmt.Errorf("cache actor %s: %w", clip(fa.ActorURI), err)}
	}
	d.Log.DebugContext(ctx, "remote actor cached", "actor", fa.ActorURI, "key_id", fa.PublicKeyID, "host", fa.Host)
	return fa, nil
}

func sameHost(a, b string) bool {
	ha, hb := hostOf(a), hostOf(b)
	return ha != "" && ha == hb
}
