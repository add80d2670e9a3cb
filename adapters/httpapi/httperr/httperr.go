// Package httperr maps errors to HTTP statuses for every HTTP surface of
// Herald (client API, ActivityPub, operator API). The domain's sentinels
// have one mapping, Common; a surface puts its own edge errors, and the few
// rows it maps differently, in front of it.
package httperr

import (
	"context"
	"errors"
	"net/http"

	"github.com/heraldfed/herald/domain"
)

// Rule maps one error to a status. Detail says whether the error's own
// text may go to the client: it may for validation errors, which the core
// writes for people; it may not for errors a store can produce, whose text
// may carry driver messages (constraint names, SQL states), so those get
// the sentinel's text only.
type Rule struct {
	Err    error
	Status int
	Detail bool
}

// Table is an ordered list of rules; the first that matches wins.
type Table []Rule

// Common maps the domain's sentinels. It is the one place where, say,
// domain.ErrNameTaken becomes 409.
var Common = Table{
	{domain.ErrNameTaken, http.StatusConflict, false},
	{domain.ErrAlreadyExists, http.StatusConflict, false},
	{domain.ErrInvalidName, http.StatusUnprocessableEntity, true},
	{domain.ErrInvalidInput, http.StatusUnprocessableEntity, true},
	{domain.ErrUnauthorized, http.StatusUnauthorized, false},
	{domain.ErrForbidden, http.StatusForbidden, true},
	// Before ErrNotFound: a deleted actor's error is both (it is missing
	// for the use cases), and the client must learn it is gone for good.
	{domain.ErrGone, http.StatusGone, false},
	{domain.ErrNotFound, http.StatusNotFound, false},
	{domain.ErrUnavailable, http.StatusServiceUnavailable, false},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, false},
}

// Before returns a table that tries rules first and then t.
func (t Table) Before(rules ...Rule) Table {
	return append(append(Table{}, rules...), t...)
}

// Classify returns the status of err and the message the client may see;
// an error no rule knows is a 500 whose text stays on the server.
func (t Table) Classify(err error) (status int, message string) {
	for _, r := range t {
		if errors.Is(err, r.Err) {
			if r.Detail {
				return r.Status, err.Error()
			}
			return r.Status, r.Err.Error()
		}
	}
	return http.StatusInternalServerError, http.StatusText(http.StatusInternalServerError)
}

// Status is the status part of Classify.
func (t Table) Status(err error) int {
	s, _ := t.Classify(err)
	return s
}
