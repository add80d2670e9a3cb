package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/bson"
	mongodrv "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// extrasDoc is domain.Extras without the poll, in a post's document.
type extrasDoc struct {
	Summary     string          `bson:"summary,omitempty"`
	Sensitive   bool            `bson:"sensitive,omitempty"`
	Language    string          `bson:"language,omitempty"`
	URL         string          `bson:"url,omitempty"`
	Attachments []attachmentDoc `bson:"attachments,omitempty"`
	Hashtags    []string        `bson:"hashtags,omitempty"`
	Emojis      []emojiDoc      `bson:"emojis,omitempty"`
}

type attachmentDoc struct {
	Kind      string    `bson:"kind"`
	MediaType string    `bson:"mediaType,omitempty"`
	URL       string    `bson:"url"`
	Name      string    `bson:"name,omitempty"`
	Blurhash  string    `bson:"blurhash,omitempty"`
	Width     int       `bson:"width,omitempty"`
	Height    int       `bson:"height,omitempty"`
	Focal     []float64 `bson:"focal,omitempty"`
}

type emojiDoc struct {
	Shortcode string `bson:"shortcode"`
	IconURL   string `bson:"iconUrl"`
	MediaType string `bson:"mediaType,omitempty"`
}

// pollDoc is a post's poll. Counted is how many votes its counts were
// taken from: votes only grow, so a count from more votes is the newer,
// and a write of counts is conditional on it (two recounts at once end
// with the later one's).
type pollDoc struct {
	Multiple bool        `bson:"multiple,omitempty"`
	Options  []optionDoc `bson:"options"`
	Voters   int         `bson:"voters"`
	EndTime  *time.Time  `bson:"endTime,omitempty"`
	Closed   *time.Time  `bson:"closed,omitempty"`
	Counted  int         `bson:"counted,omitempty"`
}

type optionDoc struct {
	Name  string `bson:"name"`
	Votes int    `bson:"votes"`
}

type voteDoc struct {
	ObjectURI string    `bson:"objectUri"`
	Voter     string    `bson:"voter"`
	Slot      string    `bson:"slot"`
	Choice    string    `bson:"choice"`
	VotedAt   time.Time `bson:"votedAt"`
}

// openPollDoc is a poll written here and not closed yet, by its URI.
type openPollDoc struct {
	ObjectURI string    `bson:"_id"`
	EndTime   time.Time `bson:"endTime"`
	Changed   bool      `bson:"changed"`
}

func newExtrasDoc(e domain.Extras) *extrasDoc {
	e.Poll = nil
	if e.Empty() {
		return nil
	}
	d := &extrasDoc{Summary: e.Summary, Sensitive: e.Sensitive, Language: e.Language, URL: e.URL, Hashtags: e.Hashtags}
	for _, a := range e.Attachments {
		ad := attachmentDoc{Kind: string(a.Kind), MediaType: a.MediaType, URL: a.URL, Name: a.Name, Blurhash: a.Blurhash, Width: a.Width, Height: a.Height}
		if a.Focal != nil {
			ad.Focal = []float64{a.Focal[0], a.Focal[1]}
		}
		d.Attachments = append(d.Attachments, ad)
	}
	for _, em := range e.Emojis {
		d.Emojis = append(d.Emojis, emojiDoc{Shortcode: em.Shortcode, IconURL: em.IconURL, MediaType: em.MediaType})
	}
	return d
}

func (d *extrasDoc) extras(poll *pollDoc) domain.Extras {
	var e domain.Extras
	if d != nil {
		e = domain.Extras{Summary: d.Summary, Sensitive: d.Sensitive, Language: d.Language, URL: d.URL, Hashtags: d.Hashtags}
		for _, a := range d.Attachments {
			at := domain.Attachment{Kind: domain.MediaKind(a.Kind), MediaType: a.MediaType, URL: a.URL, Name: a.Name, Blurhash: a.Blurhash,
				Width: a.Width, Height: a.Height}
			if len(a.Focal) == 2 {
				at.Focal = &[2]float64{a.Focal[0], a.Focal[1]}
			}
			e.Attachments = append(e.Attachments, at)
		}
		for _, em := range d.Emojis {
			e.Emojis = append(e.Emojis, domain.Emoji{Shortcode: em.Shortcode, IconURL: em.IconURL, MediaType: em.MediaType})
		}
	}
	e.Poll = poll.poll()
	return e
}

func newPollDoc(p *domain.Poll) *pollDoc {
	if p == nil {
		return nil
	}
	d := &pollDoc{Multiple: p.Multiple, Voters: p.Voters, Options: []optionDoc{}, EndTime: toPtr(p.EndTime), Closed: toPtr(p.Closed)}
	for _, o := range p.Options {
		d.Options = append(d.Options, optionDoc{Name: o.Name, Votes: o.Votes})
	}
	return d
}

func (d *pollDoc) poll() *domain.Poll {
	if d == nil {
		return nil
	}
	p := &domain.Poll{Multiple: d.Multiple, Voters: d.Voters, EndTime: fromPtr(d.EndTime), Closed: fromPtr(d.Closed)}
	for _, o := range d.Options {
		p.Options = append(p.Options, domain.PollOption{Name: o.Name, Votes: o.Votes})
	}
	return p
}

// pollPost reads a post's poll and whether it is local; domain.ErrNotFound
// when there is no post with a poll.
func (s *ContentStore) pollPost(ctx context.Context, uri string) (*pollDoc, bool, error) {
	var d struct {
		Local bool     `bson:"local"`
		Poll  *pollDoc `bson:"poll"`
	}
	err := s.posts.FindOne(ctx, bson.D{{Key: "objectUri", Value: uri}},
		options.FindOne().SetProjection(bson.D{{Key: "local", Value: 1}, {Key: "poll", Value: 1}})).Decode(&d)
	if err != nil {
		return nil, false, fmt.Errorf("poll %q: %w", uri, interpretError(err, nil))
	}
	if d.Poll == nil {
		return nil, false, fmt.Errorf("poll %q: %w", uri, domain.ErrNotFound)
	}
	return d.Poll, d.Local, nil
}

// recount counts the poll from its votes and writes the counts unless a
// count from as many votes or more was written already (or, unless
// closing, the poll closed meanwhile); it returns the poll as counted.
func (s *ContentStore) recount(ctx context.Context, uri string, p *pollDoc, closing bool) (*domain.Poll, error) {
	cur, err := s.votes.Find(ctx, bson.D{{Key: "objectUri", Value: uri}}, options.Find().SetProjection(bson.D{{Key: "voter", Value: 1}, {Key: "choice", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []voteDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	votes := make([]ports.PollVote, len(docs))
	for i, v := range docs {
		votes[i] = ports.PollVote{Voter: v.Voter, Choice: v.Choice}
	}
	poll := p.poll()
	ports.Recount(poll, votes)
	counted := newPollDoc(poll)
	filter := bson.D{{Key: "objectUri", Value: uri}}
	if !closing {
		filter = append(filter, bson.E{Key: "poll.closed", Value: bson.D{{Key: "$exists", Value: false}}},
			bson.E{Key: "$or", Value: bson.A{
				bson.D{{Key: "poll.counted", Value: bson.D{{Key: "$lt", Value: len(docs)}}}},
				bson.D{{Key: "poll.counted", Value: bson.D{{Key: "$exists", Value: false}}}},
			}})
	}
	set := bson.D{{Key: "poll.options", Value: counted.Options}, {Key: "poll.voters", Value: counted.Voters}, {Key: "poll.counted", Value: len(docs)}}
	if _, err := s.posts.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}}); err != nil {
		return nil, err
	}
	return poll, nil
}

// AddVotes implements ports.PollStore: the unique poll_votes_vote index
// (objectUri, voter, slot) decides among concurrent votes; a local poll
// is then counted again from its votes (recount) and marked changed.
func (s *ContentStore) AddVotes(ctx context.Context, uri, voter string, choices []string, at time.Time) (domain.Poll, int, error) {
	fail := func(err error) (domain.Poll, int, error) {
		return domain.Poll{}, 0, fmt.Errorf("votes in %q: %w", uri, interpretError(err, nil))
	}
	p, local, err := s.pollPost(ctx, uri)
	if err != nil {
		return domain.Poll{}, 0, err
	}
	poll := p.poll()
	if !poll.Closed.IsZero() {
		return *poll, 0, nil
	}
	added := 0
	for _, c := range choices {
		err := insertOne(ctx, s.votes, voteDoc{ObjectURI: uri, Voter: voter, Slot: ports.VoteSlot(*poll, c), Choice: c, VotedAt: utc(at)})
		if mongodrv.IsDuplicateKeyError(err) {
			continue
		}
		if err != nil {
			return fail(err)
		}
		added++
	}
	if !local || added == 0 {
		return *poll, added, nil
	}
	if poll, err = s.recount(ctx, uri, p, false); err != nil {
		return fail(err)
	}
	if _, err := s.openPolls.UpdateOne(ctx, bson.D{{Key: "_id", Value: uri}}, bson.D{{Key: "$set", Value: bson.D{{Key: "changed", Value: true}}}}); err != nil {
		return fail(err)
	}
	return *poll, added, nil
}

// VotesOf implements ports.PollStore along poll_votes_vote.
func (s *ContentStore) VotesOf(ctx context.Context, uri, voter string) ([]string, error) {
	docs, err := findAll(ctx, s.votes, bson.D{{Key: "objectUri", Value: uri}, {Key: "voter", Value: voter}}, "votes",
		func(v voteDoc) voteDoc { return v }, options.Find().SetSort(bson.D{{Key: "votedAt", Value: 1}, {Key: "choice", Value: 1}}))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(docs))
	for i, v := range docs {
		out[i] = v.Choice
	}
	return out, nil
}

// SetPoll implements ports.PollStore: one conditional UpdateOne, its
// filter domain.Poll.Replaces (an open poll does not replace a closed one).
func (s *ContentStore) SetPoll(ctx context.Context, uri string, p domain.Poll) (bool, error) {
	filter := bson.D{{Key: "objectUri", Value: uri}, {Key: "poll", Value: bson.D{{Key: "$exists", Value: true}}}}
	if p.Closed.IsZero() {
		filter = append(filter, bson.E{Key: "poll.closed", Value: bson.D{{Key: "$exists", Value: false}}})
	}
	res, err := s.posts.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{{Key: "poll", Value: newPollDoc(&p)}}}})
	if err != nil {
		return false, fmt.Errorf("poll %q: %w", uri, interpretError(err, nil))
	}
	if res.MatchedCount > 0 {
		return true, nil
	}
	if _, _, err := s.pollPost(ctx, uri); err != nil {
		return false, err
	}
	return false, nil
}

// PollsDue implements ports.PollStore: open_polls is the polls not
// closed yet, a few documents.
func (s *ContentStore) PollsDue(ctx context.Context, now time.Time, limit int) ([]domain.PollDue, error) {
	filter := bson.D{{Key: "$or", Value: bson.A{
		bson.D{{Key: "changed", Value: true}},
		bson.D{{Key: "endTime", Value: bson.D{{Key: "$lte", Value: utc(now)}, {Key: "$gt", Value: time.Time{}}}}},
	}}}
	opts := options.Find().SetSort(bson.D{{Key: "endTime", Value: 1}, {Key: "_id", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit))
	}
	return findAll(ctx, s.openPolls, filter, "polls due", func(d openPollDoc) domain.PollDue {
		end := d.EndTime.UTC()
		return domain.PollDue{ObjectURI: d.ObjectURI, EndTime: end, Changed: d.Changed, Expired: !end.IsZero() && !now.Before(end)}
	}, opts)
}

// TakePollChange implements ports.PollStore: one conditional UpdateOne.
func (s *ContentStore) TakePollChange(ctx context.Context, uri string) (bool, error) {
	res, err := s.openPolls.UpdateOne(ctx, bson.D{{Key: "_id", Value: uri}, {Key: "changed", Value: true}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "changed", Value: false}}}})
	if err != nil {
		return false, fmt.Errorf("poll %q: %w", uri, interpretError(err, nil))
	}
	return res.ModifiedCount == 1, nil
}

// ClosePoll implements ports.PollStore: the one whose conditional
// UpdateOne sets poll.closed closes it; a local poll is then counted
// again from its votes (a vote recorded after that is not counted).
func (s *ContentStore) ClosePoll(ctx context.Context, uri string, at time.Time) (domain.Poll, bool, error) {
	fail := func(err error) (domain.Poll, bool, error) {
		return domain.Poll{}, false, fmt.Errorf("close poll %q: %w", uri, interpretError(err, nil))
	}
	res, err := s.posts.UpdateOne(ctx, bson.D{{Key: "objectUri", Value: uri}, {Key: "poll", Value: bson.D{{Key: "$exists", Value: true}}},
		{Key: "poll.closed", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "poll.closed", Value: utc(at)}}}})
	if err != nil {
		return fail(err)
	}
	p, local, err := s.pollPost(ctx, uri)
	if err != nil {
		return domain.Poll{}, false, err
	}
	if _, err := s.openPolls.DeleteOne(ctx, bson.D{{Key: "_id", Value: uri}}); err != nil {
		return fail(err)
	}
	if res.ModifiedCount == 0 || !local {
		return *p.poll(), res.ModifiedCount == 1, nil
	}
	poll, err := s.recount(ctx, uri, p, true)
	if err != nil {
		return fail(err)
	}
	return *poll, true, nil
}

// Voters implements ports.PollStore along poll_votes_vote: the votes
// after afterURI in voter order, a voter's several (one per option) read
// and told once.
func (s *ContentStore) Voters(ctx context.Context, uri, after string, limit int) ([]string, error) {
	opts := options.Find().SetSort(bson.D{{Key: "voter", Value: 1}}).SetProjection(bson.D{{Key: "voter", Value: 1}})
	if limit > 0 {
		opts.SetLimit(int64(limit * domain.MaxPollOptions))
	}
	docs, err := findAll(ctx, s.votes, bson.D{{Key: "objectUri", Value: uri}, {Key: "voter", Value: bson.D{{Key: "$gt", Value: after}}}},
		"voters", func(v voteDoc) string { return v.Voter }, opts)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, v := range docs {
		if len(out) == 0 || out[len(out)-1] != v {
			out = append(out, v)
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}
