// Package interop federates Herald with real servers that no one here
// wrote: GoToSocial (Go) and snac (C), each run as a separate process on
// loopback beside a fresh Herald, all driven through their client APIs
// (Herald's JSON API, the peers' Mastodon APIs, and snac's snacpeer
// script where its API cannot tell). The scenarios are written once
// (peers_test.go) and run against both peers through one driver each
// (gotosocial_test.go, snac_test.go); a scenario a peer cannot drive is
// skipped by name with the reason. TestMegalodonGoToSocial (clients_test.go)
// drives Herald's Mastodon-compatible API with megalodon, a client library
// from npm (test/clients/harness/gotosocial.mjs, run by Node, outside
// Herald's Go module), against the GoToSocial's account. It runs only when HERALD_INTEROP=1
// (`make interop`), on every store named in HERALD_INTEROP_STORES
// (default memory,sqlite,postgres). HERALD_GOTOSOCIAL names the directory
// of the GoToSocial binary and its gts script, HERALD_SNAC that of the
// snac binary and its snacpeer script (by default the peers directory the
// CI machine keeps beside the checkout: findPeer). Without them the peer's
// test skips and says what stayed unverified.
package interop
