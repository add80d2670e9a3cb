package domain

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Report is a complaint about actors or posts of this instance that
// another server sent (an ActivityPub Flag), for the operator to read and
// resolve (SPEC §11).
type Report struct {
	ID string
	// ActivityID is the Flag's id: a Flag delivered twice is one report.
	ActivityID string
	// ReporterURI is the remote actor that sent it (Mastodon sends its
	// instance actor, not the user who reported).
	ReporterURI string
	// Targets are our actors it names, Objects our posts; at least one
	// target or object.
	Targets []string
	Objects []string
	Comment string
	// CreatedAt is when it arrived; ResolvedAt when the operator resolved
	// it (zero while open), with Resolution, the operator's note.
	CreatedAt  time.Time
	ResolvedAt time.Time
	Resolution string
}

// Limits of a report: what a Flag may carry before it is refused.
const (
	MaxReportComment = 5000 // characters (Mastodon's own limit is 1000)
	MaxReportURIs    = 100  // targets and objects together
)

// Open reports whether the operator has not resolved it yet.
func (r Report) Open() bool { return r.ResolvedAt.IsZero() }

// NewReport validates a report as it arrives.
func NewReport(id, activityID, reporter string, targets, objects []string, comment string, now time.Time) (Report, error) {
	comment = strings.TrimSpace(comment)
	targets, objects = normalizeParticipants(targets), normalizeParticipants(objects)
	switch {
	case id == "" || activityID == "" || reporter == "":
		return Report{}, fmt.Errorf("%w: a report needs an id, the Flag's id and its sender", ErrInvalidInput)
	case len(targets)+len(objects) == 0:
		return Report{}, fmt.Errorf("%w: a report names no actor or post of this instance", ErrInvalidInput)
	case len(targets)+len(objects) > MaxReportURIs:
		return Report{}, fmt.Errorf("%w: a report names %d actors and posts, more than %d", ErrInvalidInput, len(targets)+len(objects), MaxReportURIs)
	case utf8.RuneCountInString(comment) > MaxReportComment:
		return Report{}, fmt.Errorf("%w: a report's comment is at most %d characters", ErrInvalidInput, MaxReportComment)
	}
	return Report{ID: id, ActivityID: activityID, ReporterURI: reporter, Targets: targets, Objects: objects,
		Comment: comment, CreatedAt: now.UTC()}, nil
}

// UserStatus says whether an account may sign in (SPEC §11
// "Registrations").
type UserStatus string

const (
	// UserActive: the account signs in and posts. An account stored
	// before statuses existed is active.
	UserActive UserStatus = "active"
	// UserPending: signed up while registrations needed approval; it
	// cannot sign in until the operator approves it.
	UserPending UserStatus = "pending"
)

// Valid reports whether s is known.
func (s UserStatus) Valid() bool { return s == UserActive || s == UserPending }

// RegistrationMode says who may sign up.
type RegistrationMode string

const (
	RegistrationsOpen     RegistrationMode = "open"
	RegistrationsApproval RegistrationMode = "approval"
	RegistrationsClosed   RegistrationMode = "closed"
)

// Valid reports whether m is known.
func (m RegistrationMode) Valid() bool {
	return m == RegistrationsOpen || m == RegistrationsApproval || m == RegistrationsClosed
}

// MaxSignUpReason bounds what a person writes when asking to join.
const MaxSignUpReason = 1000
