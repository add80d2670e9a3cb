package ports

import (
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// CheckDomain is the validation (in front of every store: ports/checked)
// of the domain given to ForeignActorStore.OnDomain,
// ModerationStore.AddDomainAllow and JobAdmin.EndDomainJobs: a domain as
// domain.NormalizeDomain returns it. Another string would cover nothing,
// or, being empty, every host with a dot before its port: refused rather
// than guessed at.
//
// The stores that cannot call domain.DomainCovers on each row (SQL, a
// Mongo filter) spell it out on the host as stored, lower-cased, in its
// three forms, the ones net.SplitHostPort tells apart:
//
//   - "[H]:P" (a '[' first, the first ']' just before the last ':', no
//     other bracket, P without ':'): covered when H is d or ends in "."+d;
//   - "H:P" (one ':', no bracket): the same of H;
//   - anything else: one trailing '.' dropped, then every '[' and ']' at
//     either end: covered when what is left is d or ends in "."+d.
//
// When d names a port, only the host d itself is covered (and d followed
// by the one trailing dot DomainCovers drops).
func CheckDomain(d string) error {
	nd, err := domain.NormalizeDomain(d)
	if err != nil {
		return err
	}
	if nd != d {
		return fmt.Errorf("%w: domain %q is not normalized (%q)", domain.ErrInvalidInput, d, nd)
	}
	return nil
}

// StoredStatus is the status every UserStore keeps for an account given
// with status s: s itself, or domain.UserActive for an empty one (what an
// account stored before statuses existed reads as, too). An unknown
// status is domain.ErrInvalidInput.
func StoredStatus(s domain.UserStatus) (domain.UserStatus, error) {
	if s == "" {
		return domain.UserActive, nil
	}
	if !s.Valid() {
		return "", fmt.Errorf("%w: account status %q is not active or pending", domain.ErrInvalidInput, s)
	}
	return s, nil
}

// CheckReport is the validation in front of every ReportStore.AddReport
// (ports/checked): a
// report has an id and the id of its Flag, which it is unique by.
func CheckReport(r domain.Report) error {
	if r.ID == "" || r.ActivityID == "" {
		return fmt.Errorf("%w: a report needs an id and its Flag's id", domain.ErrInvalidInput)
	}
	return nil
}
