package application

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// isVote reports whether a Create's note is a poll vote as Mastodon and
// GoToSocial send one: a Note with a name (the option), no content, in
// reply to the Question.
func isVote(o IncomingObject) bool {
	return o.Type == "Note" && o.Name != "" && strings.TrimSpace(o.Content) == "" && o.Reply != ""
}

// vote counts a remote actor's votes in a poll of ours (SPEC §12 "Polls"):
// the Create's notes (one, or one per option of a multiple-choice poll)
// that name an option of the poll they reply to. Each option counts once
// per voter, and a single-choice poll one vote per voter (its first
// option); the poll's followers hear of the new counts from PollsHandler.
// A vote in a closed poll, of an unknown option, or by an actor the author
// blocks is accepted and ignored: a 4xx would say nothing more to the
// voter's server.
func (h InboxHandler) vote(ctx context.Context, req InboxRequest) (InboxResult, error) {
	d, act, signer := h.core.deps, req.Activity, req.Signer.ActorURI
	pollURI := act.Object.Reply
	var names []string
	for _, v := range append([]IncomingObject{act.Object}, act.More...) {
		if isVote(v) && v.Reply == pollURI && (v.Author == "" || v.Author == signer) && !slices.Contains(names, v.Name) {
			names = append(names, v.Name)
		}
	}
	p, err := d.Posts.PostByObjectURI(ctx, pollURI)
	if notFound(err) {
		return h.core.ignore(ctx, act, "a vote in a poll we do not have"), nil
	}
	if err != nil {
		return InboxResult{}, err
	}
	if p.Poll == nil || !p.Local {
		return h.core.ignore(ctx, act, "a vote in a post of ours that is not a poll"), nil
	}
	if !p.Poll.Open(d.Clock.Now()) {
		return h.core.ignore(ctx, act, "a vote in a closed poll"), nil
	}
	if blocked, err := h.core.blocks(ctx, p.AuthorURI, signer); err != nil {
		return InboxResult{}, err
	} else if blocked {
		return h.core.ignore(ctx, act, "a vote by an actor the author blocks"), nil
	}
	choices := validChoices(*p.Poll, names)
	if len(choices) == 0 {
		return h.core.ignore(ctx, act, "a vote for no option of the poll"), nil
	}
	_, added, err := d.Polls.AddVotes(ctx, pollURI, signer, choices, d.Clock.Now())
	if err != nil {
		return InboxResult{}, err
	}
	if added == 0 {
		return InboxResult{Duplicate: true}, nil
	}
	d.Log.InfoContext(ctx, "poll vote counted", "poll", pollURI, "voter", signer, "votes", added)
	return InboxResult{}, nil
}

// validChoices are the names among names that are options of p, each
// once; one at most for a single-choice poll.
func validChoices(p domain.Poll, names []string) []string {
	var out []string
	for _, n := range names {
		if p.Option(n) >= 0 && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if !p.Multiple && len(out) > 1 {
		out = out[:1]
	}
	return out
}

// Vote asks for a persona's vote in a poll: by the options' names, or by
// their indexes (from 0) when Choices is empty.
type Vote struct {
	UserID  string
	As      string // persona name; "" for the account's only persona
	Poll    string // the Question's URI
	Choices []string
	Indexes []int
}

// Voted says what a vote recorded and sent.
type Voted struct {
	Poll    domain.Poll
	Choices []string // the options voted for
	Created bool     // false when the persona had voted for them already
	EnqueueResult
}

// VoteHandler makes a persona vote in a poll held here: a remote one
// (its votes go to the poll's author as Create{Note}, one per option, as
// Mastodon sends them) or one of ours (counted here).
type VoteHandler struct{ core *fedCore }

// Handle checks the persona, the poll (open, held here) and the choices
// (options of it; one for a single-choice poll), records the votes once
// and sends them.
func (h VoteHandler) Handle(ctx context.Context, cmd Vote) (Voted, error) {
	d := h.core.deps
	as, err := personaOrOnly(ctx, h.core.pub.deps, cmd.UserID, cmd.As)
	if err != nil {
		return Voted{}, err
	}
	me, err := h.core.ownPersona(ctx, cmd.UserID, as)
	if err != nil {
		return Voted{}, err
	}
	if !httpURL(cmd.Poll) {
		return Voted{}, fmt.Errorf("%w: poll %q is not an http(s) URI", domain.ErrInvalidInput, clip(cmd.Poll))
	}
	p, err := d.Posts.PostByObjectURI(ctx, cmd.Poll)
	if notFound(err) {
		return Voted{}, fmt.Errorf("%w: no poll %q here", domain.ErrNotFound, clip(cmd.Poll))
	}
	if err != nil {
		return Voted{}, err
	}
	if p.Poll == nil {
		return Voted{}, fmt.Errorf("%w: %s is not a poll", domain.ErrInvalidInput, clip(cmd.Poll))
	}
	if !p.Poll.Open(d.Clock.Now()) {
		return Voted{}, fmt.Errorf("%w: the poll is closed", domain.ErrInvalidInput)
	}
	choices := cmd.Choices
	for _, i := range cmd.Indexes {
		if i < 0 || i >= len(p.Poll.Options) {
			return Voted{}, fmt.Errorf("%w: the poll has no option %d", domain.ErrInvalidInput, i)
		}
		choices = append(choices, p.Poll.Options[i].Name)
	}
	valid := validChoices(*p.Poll, choices)
	if len(valid) == 0 || len(valid) != len(distinct(slices.Clone(choices))) {
		return Voted{}, fmt.Errorf("%w: choose options of the poll (one for a single-choice poll)", domain.ErrInvalidInput)
	}
	if !p.Poll.Multiple && len(choices) > 1 {
		return Voted{}, fmt.Errorf("%w: a single-choice poll takes one option", domain.ErrInvalidInput)
	}
	if blocked, err := blockedBetween(ctx, d.Blocks, me.URI, p.AuthorURI); err != nil {
		return Voted{}, err
	} else if blocked {
		return Voted{}, fmt.Errorf("%w: the poll's author and %s block each other", domain.ErrForbidden, me.Name)
	}
	poll, added, err := d.Polls.AddVotes(ctx, p.ObjectURI, me.URI, valid, d.Clock.Now())
	if err != nil {
		return Voted{}, err
	}
	out := Voted{Poll: poll, Choices: valid, Created: added > 0}
	if added == 0 || h.core.local(p.AuthorURI) {
		return out, nil
	}
	author, err := h.core.pub.Resolver.Resolve(ctx, p.AuthorURI)
	if err != nil {
		return Voted{}, fmt.Errorf("the poll's author: %w", err)
	}
	for _, c := range valid {
		id := d.URLs.Activity(me.URI, "vote-"+shortHash(p.ObjectURI+"\n"+c))
		note := Note{ID: id + "#note", Type: "Note", AttributedTo: me.URI, Name: c, To: []string{p.AuthorURI}, InReplyTo: p.ObjectURI}
		act := Activity{ID: id, Type: "Create", Actor: me.URI, To: []string{p.AuthorURI}, Object: note}
		res, err := h.core.send(ctx, me, act, []string{author.DeliveryInbox()})
		if err != nil {
			return Voted{}, err
		}
		out.Queued += res.Queued
		out.AlreadyQueued += res.AlreadyQueued
	}
	d.Log.InfoContext(ctx, "voted in a remote poll", "poll", p.ObjectURI, "as", me.URI, "choices", len(valid))
	return out, nil
}
