// Package clients drives Herald's Mastodon-compatible client API with a
// client library that no one here wrote: megalodon, from npm, run by Node
// in harness/ (a module of its own, so node_modules stays out of Herald's).
// The test skips, saying why, where node or npm is missing.
package clients
