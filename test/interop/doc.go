// Package interop federates Herald with real servers that no one here
// wrote: a GoToSocial server and Herald run as separate processes on
// loopback, and the tests drive both through their client APIs (Herald's
// JSON API, GoToSocial's Mastodon API). It runs only when HERALD_INTEROP=1
// (`make interop`), on every store named in HERALD_INTEROP_STORES
// (default memory,sqlite,postgres); HERALD_GOTOSOCIAL names the directory
// of the GoToSocial binary and its gts script (default
// ../shared/peers/gotosocial next to the repository). Without them it
// skips and says what stayed unverified.
package interop
