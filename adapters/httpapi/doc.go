// Package httpapi is Herald's inbound HTTP adapter on gorilla/mux: the
// client API, the probes and, as they are added, the ActivityPub and
// operator surfaces. Handlers decode and validate input, call one use case
// and map its error to a status in one table (Status); they hold no
// business rule of their own.
package httpapi
