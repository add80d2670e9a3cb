package application

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// ActorResolver finds remote actors: in the ForeignActorStore while the
// cached copy is fresh, else by a GET signed as the instance actor, whose
// result is cached. It is the Resolver publishing uses, and what the
// inboxes find signers' keys with.
type ActorResolver struct{ core *fedCore }

var _ Resolver = (*ActorResolver)(nil)

// Resolve implements Resolver: the cached actor, fetched when missing or
// stale. A stale copy is still used when the refresh fails, so a remote
// that is down for a while does not make its actor unknown.
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
		fa, ferr := r.fetch(ctx, cached.ActorURI, keyID)
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
	fa, err = r.fetchKey(ctx, keyID)
	return fa, true, keyError(keyID, err)
}

// Refetch fetches the actor again, whatever the cache holds: the key it
// signed with no longer verifies, so it may have rotated it. Errors are as
// ByKeyID's.
func (r *ActorResolver) Refetch(ctx context.Context, actorURI, keyID string) (domain.ForeignAvatar, error) {
	fa, err := r.fetch(ctx, actorURI, keyID)
	return fa, keyError(keyID, err)
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
	body, err := r.core.deps.Fetcher.Fetch(ctx, FetchRequest{URL: u, Accept: acceptJRD})
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("webfinger %s@%s: %w", user, host, err)
	}
	actor, err := decodeJRD(body)
	if err != nil {
		return domain.ForeignAvatar{}, fmt.Errorf("webfinger %s@%s: %w", user, host, err)
	}
	return r.Resolve(ctx, actor)
}

// fetchKey fetches the document at a key id. Servers serve three shapes
// there: the full actor (Mastodon's ".../users/x#main-key"), a bare key
// {"id","owner","publicKeyPem"}, or a minimal actor without inbox whose
// publicKey has the key id (GoToSocial's ".../users/x/main-key": id, type,
// preferredUsername, publicKey only). A document with an inbox is taken as
// the actor; from any other, the key of that id names its owner, whose full
// actor is then fetched: the inbox needs it (an Accept goes to its inbox),
// and it must publish the same key, so a key document cannot speak for an
// actor that does not claim it.
func (r *ActorResolver) fetchKey(ctx context.Context, keyID string) (domain.ForeignAvatar, error) {
	docURL, _, _ := strings.Cut(keyID, "#")
	body, err := r.get(ctx, docURL)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	if owner := keyDocumentOwner(body, keyID); owner != "" {
		if !sameHost(owner, docURL) {
			return domain.ForeignAvatar{}, fmt.Errorf("%w: key %s names an owner on another host", domain.ErrUnauthorized, clip(keyID))
		}
		return r.fetch(ctx, owner, keyID)
	}
	return r.store(ctx, docURL, body, keyID)
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
	body, err := r.get(ctx, actorURI)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	return r.store(ctx, actorURI, body, keyID)
}

func (r *ActorResolver) get(ctx context.Context, u string) ([]byte, error) {
	keyID, pemText, err := r.core.instanceSigner(ctx)
	if err != nil {
		return nil, cacheError{err}
	}
	body, err := r.core.deps.Fetcher.Fetch(ctx, FetchRequest{URL: u, Accept: acceptActor, KeyID: keyID, PrivateKeyPEM: pemText})
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", clip(u), err)
	}
	return body, nil
}

// store decodes a fetched actor, checks that it lives where it was
// fetched from (a server can only speak for its own actors) and caches it.
func (r *ActorResolver) store(ctx context.Context, fetchedFrom string, body []byte, keyID string) (domain.ForeignAvatar, error) {
	d := r.core.deps
	ra, err := DecodeActor(body, keyID)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	if !sameHost(ra.ID, fetchedFrom) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %s answered for actor %s on another host", domain.ErrUnauthorized, clip(fetchedFrom), clip(ra.ID))
	}
	if keyID != "" && !sameHost(keyID, ra.ID) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: key %s is not on the actor's host", domain.ErrUnauthorized, clip(keyID))
	}
	if r.core.local(ra.ID) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: remote document claims local actor %s", domain.ErrUnauthorized, clip(ra.ID))
	}
	fa := ra.Avatar(d.Clock.Now())
	if err := d.Foreign.Upsert(ctx, fa); err != nil {
		return domain.ForeignAvatar{}, cacheError{fmt.Errorf("cache actor %s: %w", clip(fa.ActorURI), err)}
	}
	d.Log.DebugContext(ctx, "remote actor cached", "actor", fa.ActorURI, "key_id", fa.PublicKeyID, "host", fa.Host)
	return fa, nil
}

func sameHost(a, b string) bool {
	ha, hb := hostOf(a), hostOf(b)
	return ha != "" && ha == hb
}
