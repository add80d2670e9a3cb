package memory

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// pollPost returns the post holding a poll, under the mutex.
func (s *ContentStore) pollPost(uri string) (domain.Post, error) {
	p, ok := s.posts[uri]
	if !ok || p.Poll == nil {
		return domain.Post{}, fmt.Errorf("poll %q: %w", uri, domain.ErrNotFound)
	}
	return p, nil
}

// AddVotes implements ports.PollStore under one hold of the mutex.
func (s *ContentStore) AddVotes(ctx context.Context, uri, voter string, options []string, at time.Time) (domain.Poll, int, error) {
	if err := ctx.Err(); err != nil {
		return domain.Poll{}, 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pollPost(uri)
	if err != nil {
		return domain.Poll{}, 0, err
	}
	if !p.Poll.Closed.IsZero() {
		return p.Poll.Clone(), 0, nil
	}
	byVoter := s.votes[uri]
	if byVoter == nil {
		byVoter = make(map[voteKey]vote)
		s.votes[uri] = byVoter
	}
	added := 0
	for _, o := range options {
		k := voteKey{voter: voter, slot: ports.VoteSlot(*p.Poll, o)}
		if _, ok := byVoter[k]; ok {
			continue
		}
		s.voteSeq++
		byVoter[k] = vote{choice: o, seq: s.voteSeq}
		added++
	}
	if p.Local && added > 0 {
		s.recount(&p)
		if op := s.openPolls[uri]; op != nil {
			op.changed = true
		}
	}
	return p.Poll.Clone(), added, nil
}

// recount counts p's poll again from its votes and stores it, under the
// mutex.
func (s *ContentStore) recount(p *domain.Post) {
	poll := p.Poll.Clone()
	voters := map[string]bool{}
	for i := range poll.Options {
		poll.Options[i].Votes = 0
	}
	for k, v := range s.votes[p.ObjectURI] {
		if i := poll.Option(v.choice); i >= 0 {
			poll.Options[i].Votes++
			voters[k.voter] = true
		}
	}
	poll.Voters = len(voters)
	p.Poll = &poll
	s.posts[p.ObjectURI] = *p
}

// VotesOf implements ports.PollStore.
func (s *ContentStore) VotesOf(ctx context.Context, uri, voter string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var mine []vote
	for k, v := range s.votes[uri] {
		if k.voter == voter {
			mine = append(mine, v)
		}
	}
	slices.SortFunc(mine, func(a, b vote) int { return a.seq - b.seq })
	out := []string{}
	for _, v := range mine {
		out = append(out, v.choice)
	}
	return out, nil
}

// SetPoll implements ports.PollStore.
func (s *ContentStore) SetPoll(ctx context.Context, uri string, poll domain.Poll) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pollPost(uri)
	if err != nil {
		return false, err
	}
	if !poll.Replaces(*p.Poll) {
		return false, nil
	}
	poll = poll.Clone()
	p.Poll = &poll
	s.posts[uri] = p
	return true, nil
}

// PollsDue implements ports.PollStore.
func (s *ContentStore) PollsDue(ctx context.Context, now time.Time, limit int) ([]domain.PollDue, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []domain.PollDue
	for uri, op := range s.openPolls {
		expired := !op.end.IsZero() && !now.Before(op.end)
		if expired || op.changed {
			out = append(out, domain.PollDue{ObjectURI: uri, EndTime: op.end.UTC(), Expired: expired, Changed: op.changed})
		}
	}
	slices.SortFunc(out, func(a, b domain.PollDue) int {
		if c := a.EndTime.Compare(b.EndTime); c != 0 {
			return c
		}
		return compareStrings(a.ObjectURI, b.ObjectURI)
	})
	return limitSlice(out, limit), nil
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TakePollChange implements ports.PollStore.
func (s *ContentStore) TakePollChange(ctx context.Context, uri string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	op := s.openPolls[uri]
	if op == nil || !op.changed {
		return false, nil
	}
	op.changed = false
	return true, nil
}

// ClosePoll implements ports.PollStore.
func (s *ContentStore) ClosePoll(ctx context.Context, uri string, at time.Time) (domain.Poll, bool, error) {
	if err := ctx.Err(); err != nil {
		return domain.Poll{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, err := s.pollPost(uri)
	if err != nil {
		return domain.Poll{}, false, err
	}
	if !p.Poll.Closed.IsZero() {
		delete(s.openPolls, uri)
		return p.Poll.Clone(), false, nil
	}
	if p.Local {
		s.recount(&p)
	}
	poll := p.Poll.Clone()
	poll.Closed = at.UTC()
	p.Poll = &poll
	s.posts[uri] = p
	delete(s.openPolls, uri)
	return poll.Clone(), true, nil
}

// Voters implements ports.PollStore.
func (s *ContentStore) Voters(ctx context.Context, uri, after string, limit int) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.votes[uri] {
		if k.voter > after && !slices.Contains(out, k.voter) {
			out = append(out, k.voter)
		}
	}
	slices.Sort(out)
	return limitSlice(out, limit), nil
}
