package domain

import "fmt"

// Conversation is one local persona's direct thread as the client API
// lists it (Mastodon's conversation): the thread of its participants
// (ID is their ParticipantsKey), the id of its newest direct post, and
// whether that post is unread (it is not the persona's own and the
// persona has not marked it read). A persona's conversations page by
// LastStatusID, which sorts by time (post ids are UUIDv7).
type Conversation struct {
	ID           string
	Persona      string   // the local persona's actor URI
	Participants []string // sorted, including the persona
	LastStatusID string
	Unread       bool
}

// ConversationPage selects a persona's conversations as the client API
// pages them, by last status id: below MaxID, above SinceID (the newest
// there), or just above MinID (the page nearest it).
type ConversationPage struct {
	MaxID, SinceID, MinID string
	Limit                 int
}

// MaxConversationPage bounds ConversationPage.Limit.
const MaxConversationPage = 1000

// Check is the validation every store does of a page.
func (p ConversationPage) Check() error {
	if p.Limit < 1 || p.Limit > MaxConversationPage {
		return fmt.Errorf("%w: a page of 1 to %d conversations, not %d", ErrInvalidInput, MaxConversationPage, p.Limit)
	}
	return nil
}

// Above is the lower bound of p: the greater of SinceID and MinID.
func (p ConversationPage) Above() string { return max(p.SinceID, p.MinID) }

// Matches reports whether c's last status id is within p's bounds (not
// its limit): the rule the stores that filter in Go apply.
func (p ConversationPage) Matches(c Conversation) bool {
	return (p.MaxID == "" || c.LastStatusID < p.MaxID) && c.LastStatusID > p.Above()
}

// ConversationOf is persona's conversation of the direct post d, which
// it takes part in: d is its last status, unread unless persona wrote it.
func ConversationOf(persona string, d DmPost) (Conversation, error) {
	if d.ID == "" || d.ParticipantsKey == "" {
		return Conversation{}, fmt.Errorf("%w: a direct post without id or participants key", ErrInvalidInput)
	}
	found := false
	for _, p := range d.Participants {
		found = found || p == persona
	}
	if !found {
		return Conversation{}, fmt.Errorf("%w: %q takes no part in direct post %s", ErrInvalidInput, persona, d.ID)
	}
	return Conversation{ID: d.ParticipantsKey, Persona: persona, Participants: append([]string(nil), d.Participants...),
		LastStatusID: d.ID, Unread: d.AuthorURI != persona}, nil
}

// Check is the validation every store does before it adds c.
func (c Conversation) Check() error {
	if c.ID == "" || c.Persona == "" || c.LastStatusID == "" {
		return fmt.Errorf("%w: a conversation needs its id, persona and last status", ErrInvalidInput)
	}
	return nil
}
