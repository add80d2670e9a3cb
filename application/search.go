package application

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// SearchHandler finds the remote actor or post a client's search names
// (Mastodon's search with and without resolve): by "user@host" or by URL.
// Without resolve it answers from what Herald holds; with resolve it
// fetches what it lacks through the same path as a follow (WebFinger, the
// Dereferencer, cacheActor, fetchNote), so the federation policy (every
// fetch and redirect), the address guard (HERALD_ALLOW_PRIVATE_TARGETS)
// and the origin rules apply to a search as they do to a follow.
//
// A remote server that fails or refuses, a refused domain, or a name
// that is no one is not an error: there is nothing to show (Mastodon
// answers an empty result). Only a failure of our own stores is returned.
type SearchHandler struct{ core *fedCore }

// Found is what a search names: at most one actor or one post.
type Found struct {
	Actor *domain.ForeignAvatar
	Post  *domain.Post
}

// Account finds user@host, a remote actor. Without resolve it is found
// only in the cache, at the actor URI most servers give an account
// (scheme://host/users/user: Mastodon, GoToSocial, Akkoma, Herald), since
// the cache is not indexed by name; with resolve an uncached or stale one
// is looked up by WebFinger and fetched.
func (h SearchHandler) Account(ctx context.Context, user, host string, resolve bool) (Found, error) {
	d := h.core.deps
	host = strings.ToLower(host)
	if user == "" || host == "" || strings.ContainsAny(user+host, "/?#@ ") || len(user)+len(host) > 512 {
		return Found{}, nil
	}
	if err := d.Moderation.Refuse(ctx, domain.CanonicalHost(host), RefusedFetch); err != nil {
		return h.missed(ctx, user+"@"+host, err)
	}
	guess := NewURLs(host).Scheme + "://" + host + "/users/" + user
	cached, err := d.Foreign.ByActorURI(ctx, guess)
	switch {
	case err == nil && strings.EqualFold(cached.PreferredUsername, user) && strings.EqualFold(cached.Host, host):
		if !resolve || !cached.Stale(d.Clock.Now()) {
			return Found{Actor: &cached}, nil
		}
	case err != nil && !notFound(err):
		return Found{}, err
	}
	if !resolve {
		return Found{}, nil
	}
	fa, err := h.core.resolver.Account(ctx, user, host)
	if err != nil {
		return h.missed(ctx, user+"@"+host, err)
	}
	return Found{Actor: &fa}, nil
}

// URL finds the actor or post at uri: held here, or (with resolve)
// fetched. One GET tells which it is; an actor is cached from that
// answer, a post is stored by fetchNote, whose rules (public, attributed
// to an actor of its server, not deleted) every remote post that comes
// in unasked obeys, at the cost of a second GET.
func (h SearchHandler) URL(ctx context.Context, uri string, resolve bool) (Found, error) {
	d := h.core.deps
	if !httpURL(uri) {
		return Found{}, nil
	}
	if !h.core.local(uri) {
		if err := d.Moderation.Refuse(ctx, hostOf(uri), RefusedFetch); err != nil {
			return h.missed(ctx, uri, err)
		}
	}
	if p, err := d.Posts.PostByObjectURI(ctx, uri); err == nil {
		return Found{Post: &p}, nil
	} else if !notFound(err) {
		return Found{}, err
	}
	if fa, err := d.Foreign.ByActorURI(ctx, uri); err == nil {
		return Found{Actor: &fa}, nil
	} else if !notFound(err) {
		return Found{}, err
	}
	if !resolve || h.core.local(uri) {
		return Found{}, nil
	}
	doc, err := h.core.resolver.deref.fetch(ctx, uri)
	if err != nil {
		return h.missed(ctx, uri, err)
	}
	var o struct {
		Type json.RawMessage `json:"type"`
	}
	if err := decodeObject(doc.Body, &o); err != nil {
		return h.missed(ctx, uri, fmt.Errorf("%w: %v", domain.ErrInvalidInput, err))
	}
	switch typ := typeOf(o.Type); {
	case actorTypes[typ]:
		fa, err := h.core.resolver.cacheDocument(ctx, doc, "")
		if err != nil {
			return h.missed(ctx, uri, err)
		}
		return Found{Actor: &fa}, nil
	case noteTypes[typ]:
		p, err := h.core.fetchNote(ctx, doc.ID)
		if err != nil {
			return h.missed(ctx, uri, err)
		}
		return Found{Post: &p}, nil
	default:
		return h.missed(ctx, uri, fmt.Errorf("%w: a %q is neither an actor nor a post", domain.ErrInvalidInput, clip(typ)))
	}
}

// missed turns a remote's failure into "nothing found" and keeps our
// own stores' failures as errors.
func (h SearchHandler) missed(ctx context.Context, what string, err error) (Found, error) {
	if isCacheError(err) {
		return Found{}, err
	}
	for _, remote := range []error{domain.ErrNotFound, domain.ErrForbidden, domain.ErrInvalidInput, domain.ErrUnavailable,
		domain.ErrUnauthorized, errNoteRefused} {
		if errors.Is(err, remote) {
			h.core.deps.Log.DebugContext(ctx, "search found nothing", "query", clip(what), "err", err)
			return Found{}, nil
		}
	}
	return Found{}, err
}
