package domain

import "errors"

// Sentinel errors. Adapters translate their driver's errors into these in one
// place each; the HTTP adapter maps them to status codes in one table. Callers
// compare with errors.Is, so wrapping with more context is always safe.
var (
	// ErrNameTaken: the name is already reserved, or is never available.
	ErrNameTaken = errors.New("name taken")
	// ErrInvalidName: the name does not match [a-z0-9_]{1,30} after folding.
	ErrInvalidName = errors.New("invalid name")
	// ErrNotFound: no such entity.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: a unique key other than a name is already present.
	ErrAlreadyExists = errors.New("already exists")
	// ErrLeaseLost: the caller's lease token no longer holds the job (it
	// expired and was reaped, or another worker holds it now). The caller's
	// work must not be recorded.
	ErrLeaseLost = errors.New("lease lost")
	// ErrNoJob: nothing is runnable right now.
	ErrNoJob = errors.New("no runnable job")
	// ErrInvalidInput: a request or entity breaks a rule other than naming.
	ErrInvalidInput = errors.New("invalid input")
	// ErrUnauthorized: missing or wrong credentials.
	ErrUnauthorized = errors.New("unauthorized")
	// ErrForbidden: authenticated, but not allowed to act on that resource.
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable: a dependency (the store) cannot be reached. Retryable.
	ErrUnavailable = errors.New("unavailable")
	// ErrGone: the entity existed and was deleted for good (a deleted
	// persona): unlike ErrNotFound, it will never come back.
	ErrGone = errors.New("gone")
)
