// Package engine is Herald's delivery engine (SPEC §2): it leases queued
// jobs, delivers them, and writes what each attempt decided. It depends on
// domain and ports only; the use cases reach it through their own small
// interfaces (application.Waker, application.KeyRotations), and bootstrap
// builds it with New.
//
// Three parts each own their state and their lock, and two maintenance
// services run beside them:
//
//	dispatcher   dispatcher.go, lease.go, slots.go: leases jobs for the free
//	             slots, admits them to a slot or to the waits, starts them
//	host policy  hosts.go, breaker.go: what this process knows of each host
//	             (breaker view, holds, recent answers, failing hosts)
//	completer    completer.go: writes the results in batches, behind one
//	             interface
//	maintenance  maintenance.go: the reaper and the retention purge
//
// The path of a job, one step per file:
//
//	enqueue.go   enqueue → the dispatcher is woken
//	lease.go     lease → a batch of jobs for the free slots, in one round trip
//	slots.go     admission → a slot, a place in the waits, or back to the queue
//	deliver.go   deliver → one job's attempt and what it decided
//	outcome.go   outcome → the settlement that records it
//
// docs/delivery.md draws every state of a delivery and names the file
// that owns it.
package engine
