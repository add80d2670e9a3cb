package application

import (
	"net"
	"net/url"
	"strings"
)

// URLs builds the public URIs of local objects from the instance's domain.
// Every actor, key, collection and activity id Herald hands out comes from
// here, so the layout is defined once.
type URLs struct {
	Domain string // host[:port], as in HERALD_DOMAIN
	Scheme string // "https", or "http" for a loopback domain
}

// NewURLs picks https, except for a loopback domain (local demos and tests
// of two instances on one machine), where there is no TLS.
func NewURLs(domain string) URLs {
	scheme := "https"
	host := domain
	if h, _, err := net.SplitHostPort(domain); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		scheme = "http"
	} else if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		scheme = "http"
	}
	return URLs{Domain: domain, Scheme: scheme}
}

func (u URLs) base() string { return u.Scheme + "://" + u.Domain }

// Base is the instance's origin.
func (u URLs) Base() string { return u.base() }

// Persona is a persona's actor URI.
func (u URLs) Persona(name string) string { return u.base() + "/users/" + name }

// Group is a group's actor URI.
func (u URLs) Group(name string) string { return u.base() + "/groups/" + name }

// InstanceActor is the instance actor's URI.
func (u URLs) InstanceActor() string { return u.base() + "/actor" }

// Key is an actor's public key id.
func (u URLs) Key(actorURI string) string { return actorURI + "#main-key" }

// Inbox, Outbox and Followers are an actor's collections.
func (u URLs) Inbox(actorURI string) string     { return actorURI + "/inbox" }
func (u URLs) Outbox(actorURI string) string    { return actorURI + "/outbox" }
func (u URLs) Followers(actorURI string) string { return actorURI + "/followers" }
func (u URLs) Following(actorURI string) string { return actorURI + "/following" }

// Featured is an actor's featured (pinned posts) collection, at the path
// Mastodon uses.
func (u URLs) Featured(actorURI string) string { return actorURI + "/collections/featured" }

// SharedInbox is the instance's shared inbox.
func (u URLs) SharedInbox() string { return u.base() + "/inbox" }

// Note is a local note's object URI.
func (u URLs) Note(actorURI, id string) string { return actorURI + "/statuses/" + id }

// Activity is a local activity's id.
func (u URLs) Activity(actorURI, id string) string { return actorURI + "/activities/" + id }

// Tag is a hashtag's page, the href of its Hashtag tags (as Mastodon's
// /tags/NAME). Herald serves no page there; the client API lists a tag's
// posts at /api/v1/tags/{tag}/posts.
func (u URLs) Tag(name string) string { return u.base() + "/tags/" + url.PathEscape(name) }
