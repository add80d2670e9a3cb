// Package mastodon is Herald's Mastodon-compatible client API (issue 34):
// OAuth 2 as Mastodon has it (apps, the authorization page, tokens) and
// the REST endpoints that Mastodon apps and client libraries call, with
// Mastodon's entities and error shapes. It sits beside Herald's own
// client API (package httpapi), which keeps working; docs/api.md lists
// every endpoint with what is implemented.
//
// Every request acts as one persona: the one its token was given for.
package mastodon
