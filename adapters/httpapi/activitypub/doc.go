// Package activitypub is Herald's ActivityPub surface over HTTP: WebFinger
// and NodeInfo discovery, actor documents of personas, groups and the
// instance actor (with content negotiation), outbox and followers
// collections, and the personal and shared inboxes, which verify each
// request's HTTP Signature (draft-cavage, rsa-sha256 or hs2019, with
// github.com/go-fed/httpsig), its Digest and its Date before the
// application acts on the activity. It registers its routes on the shared
// router as one of httpapi's extra Routes.
package activitypub
