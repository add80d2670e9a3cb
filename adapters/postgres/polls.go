package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// lockPoll reads the post's poll and whether it is local, holding the
// post's row until tx ends (concurrent votes count one after the other);
// domain.ErrNotFound when there is no post with a poll.
func lockPoll(ctx context.Context, tx pgx.Tx, uri string) (*domain.Poll, bool, error) {
	var raw []byte
	var local bool
	err := tx.QueryRow(ctx, `SELECT poll, local FROM posts WHERE object_uri = $1 FOR UPDATE`, uri).Scan(&raw, &local)
	if err != nil {
		return nil, false, err
	}
	p, err := ports.DecodePoll(raw)
	if err != nil {
		return nil, false, err
	}
	if p == nil {
		return nil, false, fmt.Errorf("poll %q: %w", uri, domain.ErrNotFound)
	}
	return p, local, nil
}

// recount counts p from its votes and stores it with the post, in tx.
func recount(ctx context.Context, tx pgx.Tx, uri string, p *domain.Poll) error {
	votes, err := query(ctx, tx, func(r pgx.Row) (v ports.PollVote, err error) {
		return v, r.Scan(&v.Voter, &v.Choice)
	}, `SELECT voter_uri, choice FROM poll_votes WHERE object_uri = $1`, uri)
	if err != nil {
		return err
	}
	ports.Recount(p, votes)
	return storePoll(ctx, tx, uri, p)
}

func storePoll(ctx context.Context, tx pgx.Tx, uri string, p *domain.Poll) error {
	raw, err := ports.EncodePoll(p)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE posts SET poll = $2::jsonb WHERE object_uri = $1`, uri, jsonArg(raw))
	return err
}

// AddVotes implements ports.PollStore in one transaction holding the
// post's row: the primary key (object_uri, voter_uri, slot) keeps one
// vote per voter and option, or per voter in a single-choice poll.
func (s *ContentStore) AddVotes(ctx context.Context, uri, voter string, options []string, at time.Time) (domain.Poll, int, error) {
	var out domain.Poll
	var added int
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		added = 0
		p, local, err := lockPoll(ctx, tx, uri)
		if err != nil {
			return err
		}
		out = *p
		if !p.Closed.IsZero() {
			return nil
		}
		for _, o := range options {
			tag, err := tx.Exec(ctx, `
INSERT INTO poll_votes (object_uri, voter_uri, slot, choice, voted_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING`, uri, voter, ports.VoteSlot(*p, o), o, at.UTC())
			if err != nil {
				return err
			}
			added += int(tag.RowsAffected())
		}
		if !local || added == 0 {
			return nil
		}
		if err := recount(ctx, tx, uri, p); err != nil {
			return err
		}
		out = *p
		_, err = tx.Exec(ctx, `UPDATE open_polls SET changed = true WHERE object_uri = $1`, uri)
		return err
	})
	if err != nil {
		return domain.Poll{}, 0, fmt.Errorf("votes in %q: %w", uri, interpretError(err))
	}
	return out, added, nil
}

// VotesOf implements ports.PollStore on poll_votes' primary key.
func (s *ContentStore) VotesOf(ctx context.Context, uri, voter string) ([]string, error) {
	out, err := query(ctx, s.pool, scanText, `SELECT choice FROM poll_votes WHERE object_uri = $1 AND voter_uri = $2 ORDER BY voted_at, choice COLLATE "C"`, uri, voter)
	if err != nil {
		return nil, fmt.Errorf("votes of %q in %q: %w", voter, uri, interpretError(err))
	}
	return out, nil
}

// SetPoll implements ports.PollStore in one transaction holding the
// post's row.
func (s *ContentStore) SetPoll(ctx context.Context, uri string, p domain.Poll) (bool, error) {
	changed := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		old, _, err := lockPoll(ctx, tx, uri)
		if err != nil {
			return err
		}
		if !p.Replaces(*old) {
			return nil
		}
		changed = true
		return storePoll(ctx, tx, uri, &p)
	})
	if err != nil {
		return false, fmt.Errorf("poll %q: %w", uri, interpretError(err))
	}
	return changed, nil
}

// PollsDue implements ports.PollStore: open_polls is the polls not
// closed yet, a few rows.
func (s *ContentStore) PollsDue(ctx context.Context, now time.Time, limit int) ([]domain.PollDue, error) {
	out, err := query(ctx, s.pool, func(r pgx.Row) (d domain.PollDue, err error) {
		err = r.Scan(&d.ObjectURI, &d.EndTime, &d.Changed, &d.Expired)
		d.EndTime = d.EndTime.UTC()
		return d, err
	}, `
SELECT object_uri, end_time, changed, end_time <= $1 FROM open_polls
WHERE changed OR end_time <= $1
ORDER BY end_time, object_uri COLLATE "C" LIMIT $2`, now.UTC(), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("polls due: %w", interpretError(err))
	}
	return out, nil
}

// TakePollChange implements ports.PollStore: one conditional UPDATE.
func (s *ContentStore) TakePollChange(ctx context.Context, uri string) (bool, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE open_polls SET changed = false WHERE object_uri = $1 AND changed`, uri)
	if err != nil {
		return false, fmt.Errorf("poll %q: %w", uri, interpretError(err))
	}
	return tag.RowsAffected() == 1, nil
}

// ClosePoll implements ports.PollStore in one transaction holding the
// post's row, so no vote is counted after it.
func (s *ContentStore) ClosePoll(ctx context.Context, uri string, at time.Time) (domain.Poll, bool, error) {
	var out domain.Poll
	closed := false
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		closed = false
		p, local, err := lockPoll(ctx, tx, uri)
		if err != nil {
			return err
		}
		out = *p
		if _, err := tx.Exec(ctx, `DELETE FROM open_polls WHERE object_uri = $1`, uri); err != nil {
			return err
		}
		if !p.Closed.IsZero() {
			return nil
		}
		p.Closed = at.UTC()
		if local {
			err = recount(ctx, tx, uri, p)
		} else {
			err = storePoll(ctx, tx, uri, p)
		}
		out, closed = *p, err == nil
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		err = fmt.Errorf("poll %q: %w", uri, domain.ErrNotFound)
	}
	if err != nil {
		return domain.Poll{}, false, fmt.Errorf("close poll %q: %w", uri, interpretError(err))
	}
	return out, closed, nil
}

// Voters implements ports.PollStore on poll_votes' primary key.
func (s *ContentStore) Voters(ctx context.Context, uri, after string, limit int) ([]string, error) {
	out, err := query(ctx, s.pool, scanText, `
SELECT DISTINCT voter_uri COLLATE "C" FROM poll_votes WHERE object_uri = $1 AND voter_uri COLLATE "C" > $2
ORDER BY 1 LIMIT $3`, uri, after, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("voters in %q: %w", uri, interpretError(err))
	}
	return out, nil
}
