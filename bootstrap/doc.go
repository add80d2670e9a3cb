// Package bootstrap is the composition root: it parses the configuration
// once, opens the configured store, and wires adapters into the use cases,
// the delivery engine and the HTTP server with google/wire. It is the only
// package that knows every concrete type; nothing else reads the
// environment or knows which store runs.
package bootstrap
