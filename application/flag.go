package application

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/heraldfed/herald/domain"
)

// flag keeps a report (an ActivityPub Flag) for the operator (SPEC §11):
// from any server, naming our actors and posts, once per Flag id. A Flag
// that names nothing of ours, or is over the report limits, is refused
// with a 4xx and nothing is kept; one from a domain whose block rejects
// reports is accepted and dropped. The comment is kept as the text it is
// (Mastodon sends plain text); the operator's page escapes it.
func (h InboxHandler) flag(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	if d.Reports == nil {
		return h.core.ignore(ctx, act, "reports are not kept here"), nil
	}
	if !httpURL(act.ID) || !sameHost(act.ID, signer) {
		return InboxResult{}, fmt.Errorf("%w: a Flag needs an http(s) id on the signer's server", domain.ErrInvalidInput)
	}
	if utf8.RuneCountInString(act.Content) > domain.MaxReportComment {
		return InboxResult{}, fmt.Errorf("%w: a report's comment is at most %d characters", domain.ErrInvalidInput, domain.MaxReportComment)
	}
	if p, err := d.Moderation.Policy(ctx); err == nil {
		if v := p.Of(hostOf(signer)); v.Domain != "" {
			for _, b := range p.Blocks() {
				if b.Domain == v.Domain && b.RejectReports {
					return h.core.ignore(ctx, act, "reports from this domain are rejected"), nil
				}
			}
		}
	}
	var targets, objects []string
	for _, uri := range act.Objects {
		switch _, _, actor := h.core.parseLocal(uri); {
		case actor:
			targets = append(targets, uri)
		case h.core.local(uri):
			objects = append(objects, uri)
		}
	}
	r, err := domain.NewReport(d.IDs.NewID(), act.ID, signer, targets, objects, act.Content, d.Clock.Now())
	if err != nil {
		return InboxResult{}, err
	}
	created, err := d.Reports.AddReport(ctx, r)
	if err != nil {
		return InboxResult{}, err
	}
	if !created {
		return InboxResult{Duplicate: true}, nil
	}
	d.Log.InfoContext(ctx, "report received", "report", r.ID, "reporter", signer, "targets", len(targets), "objects", len(objects))
	return InboxResult{}, nil
}
