package application

import (
	"context"
	"time"
)

// PollInterval is how often a process looks for polls written here whose
// followers must hear of them (SPEC §12 "Polls"): new votes are told at
// most this often, in one Update{Question} with the counts of the moment,
// and a poll is closed (and told) this long at most after its end.
const PollInterval = 5 * time.Second

// pollsPerPass bounds the polls one pass handles; the rest wait for the
// next.
const pollsPerPass = 100

// votersPage is how many voters are read per store call when an Update
// goes to them.
const votersPage = 500

// PollsHandler sends the Update{Question} of the polls written here: when
// votes changed their counts (coalesced: at most once per PollInterval)
// and when they close. Every process runs it; the store decides which one
// closes a poll (ClosePoll) or takes its change (TakePollChange), so each
// is told once. A zero PollsHandler (a process without federation) does
// nothing.
type PollsHandler struct{ core *fedCore }

// Run handles due polls every PollInterval until ctx ends.
func (h PollsHandler) Run(ctx context.Context) {
	if h.core == nil || h.core.deps.Polls == nil {
		return
	}
	t := time.NewTicker(PollInterval)
	defer t.Stop()
	for {
		if _, err := h.Tick(ctx); err != nil && ctx.Err() == nil {
			h.core.deps.Log.WarnContext(ctx, "polls pass failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Tick handles the polls due now: it closes those past their end and
// tells their followers the final counts, and tells those with new votes
// their counts. It returns how many Updates it sent.
func (h PollsHandler) Tick(ctx context.Context) (int, error) {
	d := h.core.deps
	now := d.Clock.Now()
	due, err := d.Polls.PollsDue(ctx, now, pollsPerPass)
	if err != nil {
		return 0, err
	}
	sent := 0
	for _, p := range due {
		tell := false
		if p.Expired {
			_, closed, err := d.Polls.ClosePoll(ctx, p.ObjectURI, now)
			if notFound(err) {
				continue
			}
			if err != nil {
				return sent, err
			}
			tell = closed
			if closed {
				if author, ok := h.core.localNoteAuthor(p.ObjectURI); ok {
					h.core.notifyPollEnded(ctx, author, p.ObjectURI)
				}
			}
		} else if p.Changed {
			if tell, err = d.Polls.TakePollChange(ctx, p.ObjectURI); err != nil {
				return sent, err
			}
		}
		if !tell {
			continue
		}
		if err := h.tell(ctx, p.ObjectURI, p.Expired); err != nil {
			// Told at the next change or at the close; the counts are
			// kept either way.
			d.Log.WarnContext(ctx, "poll update not sent", "poll", p.ObjectURI, "err", err)
			continue
		}
		sent++
	}
	return sent, nil
}

// tell sends the poll's Update{Question}, with the counts as stored, where
// an edit of the post goes (its author's followers, whom it mentioned, its
// group) and to its remote voters.
func (h PollsHandler) tell(ctx context.Context, uri string, closing bool) error {
	d := h.core.deps
	p, err := d.Posts.PostByObjectURI(ctx, uri)
	if err != nil {
		return err
	}
	if p.Poll == nil || !p.Local {
		return nil
	}
	me, err := (LocalActorsHandler{core: h.core}).ByURI(ctx, p.AuthorURI)
	if err != nil {
		return err
	}
	own := OwnPostsHandler{core: h.core}
	note, inboxes, _, err := own.audience(ctx, ownPost{me: me, post: &p})
	if err != nil {
		return err
	}
	voters, err := h.voterInboxes(ctx, me.URI, uri)
	if err != nil {
		return err
	}
	note = note.withExtras(p.Extras, d.URLs.Tag)
	id := d.URLs.Activity(me.URI, "poll-"+d.IDs.NewID())
	if closing {
		// Once per poll, whichever process closes it.
		id = d.URLs.Activity(me.URI, "poll-closed-"+shortHash(uri))
	}
	act := noteActivity(Activity{ID: id, Type: "Update", Actor: me.URI, Published: asTime(d.Clock.Now()), To: note.To, CC: note.CC}, note)
	res, err := h.core.broadcast(ctx, me, act, append(inboxes, voters...))
	if err != nil {
		return err
	}
	d.Log.InfoContext(ctx, "poll update sent", "poll", uri, "closed", closing, "queued", res.Queued)
	return nil
}

// voterInboxes are the inboxes of the poll's remote voters that are cached
// and not blocked either way by the author.
func (h PollsHandler) voterInboxes(ctx context.Context, author, uri string) ([]string, error) {
	d := h.core.deps
	var out []string
	after := ""
	for {
		voters, err := d.Polls.Voters(ctx, uri, after, votersPage)
		if err != nil {
			return nil, err
		}
		if len(voters) == 0 {
			return distinct(out), nil
		}
		after = voters[len(voters)-1]
		var remote []string
		for _, v := range voters {
			if !h.core.local(v) {
				remote = append(remote, v)
			}
		}
		found, err := d.Foreign.InboxesOf(ctx, remote)
		if err != nil {
			return nil, err
		}
		for _, a := range found {
			if blocked, err := blockedBetween(ctx, d.Blocks, author, a.ActorURI); err != nil {
				return nil, err
			} else if !blocked {
				out = append(out, a.DeliveryInbox())
			}
		}
		if len(voters) < votersPage {
			return distinct(out), nil
		}
	}
}
