// Package application is Herald's core: the delivery engine (Engine) and
// the use cases (one file each, a Handle method each) that the inbound
// adapters call. It depends on domain and ports only; bootstrap hands it
// concrete adapters.
package application
