// Package application is Herald's core: the use cases (one file each, a
// Handle method each) that the inbound adapters call, gathered in one
// Application that New builds from one Deps. It depends on domain
// and ports only; bootstrap hands it concrete adapters. The delivery
// engine is its own package, application/engine, which the use cases reach
// only through small interfaces (Waker, KeyRotations).
package application
