package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// pollOf reads the post's poll and whether it is local, in tx;
// domain.ErrNotFound when there is no post with a poll.
func pollOf(ctx context.Context, tx *sql.Tx, uri string) (*domain.Poll, bool, error) {
	var raw string
	var local bool
	err := tx.QueryRowContext(ctx, `SELECT poll, local FROM posts WHERE object_uri = ?`, uri).Scan(&raw, &local)
	if err != nil {
		return nil, false, err
	}
	p, err := ports.DecodePoll([]byte(raw))
	if err != nil {
		return nil, false, err
	}
	if p == nil {
		return nil, false, fmt.Errorf("poll %q: %w", uri, domain.ErrNotFound)
	}
	return p, local, nil
}

// recount counts p from its votes and stores it with the post, in tx.
func recount(ctx context.Context, tx *sql.Tx, uri string, p *domain.Poll) error {
	rows, err := tx.QueryContext(ctx, `SELECT voter_uri, choice FROM poll_votes WHERE object_uri = ?`, uri)
	if err != nil {
		return err
	}
	var votes []ports.PollVote
	for rows.Next() {
		var v ports.PollVote
		if err := rows.Scan(&v.Voter, &v.Choice); err != nil {
			rows.Close()
			return err
		}
		votes = append(votes, v)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	ports.Recount(p, votes)
	return storePoll(ctx, tx, uri, p)
}

func storePoll(ctx context.Context, tx *sql.Tx, uri string, p *domain.Poll) error {
	raw, err := ports.EncodePoll(p)
	if err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `UPDATE posts SET poll = ? WHERE object_uri = ?`, string(raw), uri)
	return err
}

// AddVotes implements ports.PollStore in one write transaction: the
// primary key (object_uri, voter_uri, slot) keeps one vote per voter and
// option, or per voter in a single-choice poll.
func (s *ContentStore) AddVotes(ctx context.Context, uri, voter string, options []string, at time.Time) (domain.Poll, int, error) {
	var out domain.Poll
	added := 0
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		p, local, err := pollOf(ctx, tx, uri)
		if err != nil {
			return err
		}
		out = *p
		if !p.Closed.IsZero() {
			return nil
		}
		for _, o := range options {
			res, err := tx.ExecContext(ctx, `
INSERT INTO poll_votes (object_uri, voter_uri, slot, choice, voted_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT DO NOTHING`, uri, voter, ports.VoteSlot(*p, o), o, stamp(at))
			if err != nil {
				return err
			}
			added += affected(res)
		}
		if !local || added == 0 {
			return nil
		}
		if err := recount(ctx, tx, uri, p); err != nil {
			return err
		}
		out = *p
		_, err = tx.ExecContext(ctx, `UPDATE open_polls SET changed = 1 WHERE object_uri = ?`, uri)
		return err
	})
	if err != nil {
		return domain.Poll{}, 0, fmt.Errorf("votes in %q: %w", uri, interpretError(err))
	}
	return out, added, nil
}

// VotesOf implements ports.PollStore on poll_votes' primary key.
func (s *ContentStore) VotesOf(ctx context.Context, uri, voter string) ([]string, error) {
	out, err := query(ctx, s.db, scanText,
		`SELECT choice FROM poll_votes WHERE object_uri = ? AND voter_uri = ? ORDER BY voted_at, choice`, uri, voter)
	if err != nil {
		return nil, fmt.Errorf("votes of %q in %q: %w", voter, uri, interpretError(err))
	}
	return out, nil
}

// SetPoll implements ports.PollStore in one write transaction.
func (s *ContentStore) SetPoll(ctx context.Context, uri string, p domain.Poll) (bool, error) {
	changed := false
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		old, _, err := pollOf(ctx, tx, uri)
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
	out, err := query(ctx, s.db, func(r scanner) (domain.PollDue, error) {
		var d domain.PollDue
		var end int64
		err := r.Scan(&d.ObjectURI, &end, &d.Changed, &d.Expired)
		if end != math.MinInt64 {
			d.EndTime = time.Unix(0, end).UTC()
		}
		return d, err
	}, `
SELECT object_uri, end_time, changed, end_time <> ?2 AND end_time <= ?1 FROM open_polls
WHERE changed = 1 OR (end_time <> ?2 AND end_time <= ?1)
ORDER BY end_time, object_uri LIMIT ?3`, stamp(now), int64(math.MinInt64), limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("polls due: %w", interpretError(err))
	}
	return out, nil
}

// TakePollChange implements ports.PollStore: one conditional UPDATE.
func (s *ContentStore) TakePollChange(ctx context.Context, uri string) (bool, error) {
	res, err := s.db.w.ExecContext(ctx, `UPDATE open_polls SET changed = 0 WHERE object_uri = ? AND changed = 1`, uri)
	if err != nil {
		return false, fmt.Errorf("poll %q: %w", uri, interpretError(err))
	}
	return affected(res) == 1, nil
}

// ClosePoll implements ports.PollStore in one write transaction: the
// one that removes the poll's open_polls row closes it.
func (s *ContentStore) ClosePoll(ctx context.Context, uri string, at time.Time) (domain.Poll, bool, error) {
	var out domain.Poll
	closed := false
	err := s.db.inTx(ctx, func(tx *sql.Tx) error {
		p, local, err := pollOf(ctx, tx, uri)
		if err != nil {
			return err
		}
		out = *p
		if _, err := tx.ExecContext(ctx, `DELETE FROM open_polls WHERE object_uri = ?`, uri); err != nil {
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
	if err != nil {
		return domain.Poll{}, false, fmt.Errorf("close poll %q: %w", uri, interpretError(err))
	}
	return out, closed, nil
}

// Voters implements ports.PollStore on poll_votes' primary key.
func (s *ContentStore) Voters(ctx context.Context, uri, after string, limit int) ([]string, error) {
	out, err := query(ctx, s.db, scanText,
		`SELECT DISTINCT voter_uri FROM poll_votes WHERE object_uri = ? AND voter_uri > ? ORDER BY voter_uri LIMIT ?`, uri, after, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("voters in %q: %w", uri, interpretError(err))
	}
	return out, nil
}
