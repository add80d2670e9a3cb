// Package hostile plays the hostile peer against a real Herald (SPEC §10):
// Herald is built through bootstrap exactly as `herald serve` builds it, on
// every store that runs here (memory, SQLite, PostgreSQL, and Mongo when
// MONGODB_URI is set), and fake servers on loopback ports, each one "host",
// serve forged actor documents, keys, notes and redirects and sign POSTs to
// Herald's inboxes with draft-cavage HTTP Signatures of their own. Each test
// is named for the attack it makes and asserts what Herald must do about it;
// without the rule it attacks, the attack succeeds and the test fails.
package hostile
