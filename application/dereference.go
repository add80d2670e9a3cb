package application

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// Dereferencer is the one path by which Herald reads an ActivityPub
// document from another server: actors, keys, notes, and any collection
// it comes to read. Every fetch is signed as the instance actor (servers
// with authorized fetch refuse unsigned GETs) and every answer is judged by
// the same rules (SPEC §10 "Origin", as Mastodon's fetch_resource and
// GoToSocial's dereferencer have them) before anything reads it:
//
//   - no request goes to a host the federation policy refuses (SPEC
//     §11), redirects included;
//   - the answer is ActivityPub JSON (application/activity+json, or
//     application/ld+json), not a page or plain JSON a server would serve
//     for anything (an upload, a proxy);
//   - a document speaks only for the host that finally answered (after at
//     most 3 redirects, each through the address guard): when its id is
//     not the URL that answered, it is fetched again by its id, and that
//     answer, which must carry the same id and come from the id's host, is
//     the one used. A redirect on a victim's host therefore cannot make a
//     document served elsewhere stand for the victim's actor or key.
//
// What a caller does with the document (cache an actor, store a note) has
// its own rules in its own file; this type only vouches for the origin.
type Dereferencer struct{ core *fedCore }

// Document is a remote document whose origin vouched for it.
type Document struct {
	// ID is the document's own id, on the host that answered for it.
	ID string
	// URL is the URL that finally answered (its host is ID's).
	URL  string
	Body []byte
}

// fetch GETs uri and returns the document its origin vouches for, by the
// rules above. Errors wrap domain.ErrUnavailable when the server (or our
// network) failed and a later try may succeed, domain.ErrNotFound for a
// gone document, and domain.ErrForbidden for an answer that breaks a rule
// (never worth a retry).
func (d Dereferencer) fetch(ctx context.Context, uri string) (Document, error) {
	doc, err := d.get(ctx, uri)
	if err != nil {
		return Document{}, err
	}
	if sameDocument(doc.ID, doc.URL) {
		return doc, nil
	}
	// The id names another URL (another host, or another path of this
	// one): only that URL's own answer speaks for it.
	again, err := d.get(ctx, doc.ID)
	if err != nil {
		return Document{}, fmt.Errorf("fetch %s again by its id %s: %w", clip(uri), clip(doc.ID), err)
	}
	if again.ID != doc.ID {
		return Document{}, fmt.Errorf("%w: %s names id %s, whose own answer is %s", domain.ErrForbidden, clip(uri), clip(doc.ID), clip(again.ID))
	}
	if !sameHost(again.ID, again.URL) {
		return Document{}, fmt.Errorf("%w: %s was answered by another host (%s)", domain.ErrForbidden, clip(doc.ID), clip(again.URL))
	}
	return again, nil
}

// get is one GET and the checks that need no second one: ActivityPub
// media type and an http(s) id.
func (d Dereferencer) get(ctx context.Context, uri string) (Document, error) {
	keyID, pemText, err := d.core.instanceSigner(ctx)
	if err != nil {
		return Document{}, cacheError{err}
	}
	f, err := d.core.deps.Fetcher.Fetch(ctx, FetchRequest{URL: uri, Accept: acceptActor, KeyID: keyID, PrivateKeyPEM: pemText,
		CheckHost: d.core.checkFetch(ctx)})
	if err != nil {
		return Document{}, fmt.Errorf("fetch %s: %w", clip(uri), err)
	}
	if !activityPubMediaType(f.ContentType) {
		return Document{}, fmt.Errorf("%w: %s answered %q, not ActivityPub JSON", domain.ErrForbidden, clip(uri), clip(f.ContentType))
	}
	id := documentID(f.Body)
	if !httpURL(id) {
		return Document{}, fmt.Errorf("%w: %s answered a document without an http(s) id", domain.ErrForbidden, clip(uri))
	}
	return Document{ID: id, URL: f.URL, Body: f.Body}, nil
}

// checkFetch is the federation policy's check of every host a fetch
// goes to (redirects included).
func (c *fedCore) checkFetch(ctx context.Context) func(host string) error {
	return func(host string) error { return c.deps.Moderation.Refuse(ctx, host, RefusedFetch) }
}

// documentID is the "id" of a JSON object, "" for anything else.
func documentID(body []byte) string {
	var o struct {
		ID json.RawMessage `json:"id"`
	}
	if decodeObject(body, &o) != nil {
		return ""
	}
	return stringOf(o.ID)
}

// sameDocument reports whether id names the URL that answered: the same
// URL but for a fragment (a key id "…/users/x#main-key" is served by
// "…/users/x").
func sameDocument(id, answered string) bool {
	strip := func(s string) string { s, _, _ = strings.Cut(s, "#"); return s }
	return strip(id) == strip(answered)
}

// activityPubMediaType reports whether a Content-Type is one of
// ActivityPub's: application/activity+json, or application/ld+json (with
// or without the ActivityStreams profile: servers differ on sending it).
func activityPubMediaType(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/activity+json" || mt == "application/ld+json"
}
