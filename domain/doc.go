// Package domain holds Herald's entities and the pure rules of docs/rules.md: the
// retry curve, response classification, the circuit breaker, the username
// space and the keys that make jobs and DM threads unique. It imports nothing
// of the project and does no I/O, so every rule here is tested as a plain
// function and every adapter shares the same definition of it.
package domain
