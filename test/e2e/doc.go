// Package e2e holds Herald's end-to-end tests: a fake fediverse of
// in-process servers on loopback that verify Herald's HTTP Signatures with
// their own code (not go-fed's), answer as real servers do (2xx, 4xx, 410,
// 429 with Retry-After, 5xx, slow, closed connections), and drive sign-up,
// remote follows, posts and deliveries through the real HTTP API and the
// real delivery engine; and two Herald instances that follow each other.
package e2e
