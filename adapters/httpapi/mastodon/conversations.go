package mastodon

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// conversationJSON is Mastodon's Conversation entity: accounts are the
// other participants, last_status null when none of its posts is left.
type conversationJSON struct {
	ID         string        `json:"id"`
	Unread     bool          `json:"unread"`
	Accounts   []accountJSON `json:"accounts"`
	LastStatus *statusJSON   `json:"last_status"`
}

// Page sizes of GET /api/v1/conversations, as Mastodon's.
const (
	conversationsLimit    = 20
	conversationsMaxLimit = 40
)

func (m *Routes) registerConversations(r routeAdder) {
	r.Handle("/api/v1/conversations", m.authed("read:statuses", true, m.listConversations), http.MethodGet)
	r.Handle("/api/v1/conversations/{id}", m.authed("write:conversations", true, m.hideConversation), http.MethodDelete)
	r.Handle("/api/v1/conversations/{id}/read", m.authed("write:conversations", true, m.readConversation), http.MethodPost)
}

// listConversations is GET /api/v1/conversations: the persona's direct
// threads, newest last status first, paged by max_id, since_id and
// min_id (last status ids, as Mastodon pages them) with a Link header.
func (m *Routes) listConversations(w http.ResponseWriter, r *http.Request, p application.Principal, in params) {
	limit, err := in.limit(conversationsLimit, conversationsMaxLimit)
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	ctx := withAccounts(r.Context())
	page, err := m.api.Conversations.List(ctx, p, domain.ConversationPage{MaxID: in.get("max_id"), SinceID: in.get("since_id"), MinID: in.get("min_id"), Limit: limit})
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	writePage(m, w, r, in, page.Items, page.Oldest, page.Newest, func(it application.ConversationItem) (conversationJSON, error) {
		return m.conversationOf(ctx, p, it)
	})
}

// readConversation is POST /api/v1/conversations/:id/read: the
// conversation, read.
func (m *Routes) readConversation(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	ctx := withAccounts(r.Context())
	it, err := m.api.Conversations.Read(ctx, p, mux.Vars(r)["id"])
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	c, err := m.conversationOf(ctx, p, it)
	reply(w, r, m.log, err, http.StatusOK, c)
}

// hideConversation is DELETE /api/v1/conversations/:id: gone from the
// list until the thread's next direct post; an empty object, as
// Mastodon answers.
func (m *Routes) hideConversation(w http.ResponseWriter, r *http.Request, p application.Principal, _ params) {
	reply(w, r, m.log, m.api.Conversations.Hide(r.Context(), p, mux.Vars(r)["id"]), http.StatusOK, struct{}{})
}

func (m *Routes) conversationOf(ctx context.Context, p application.Principal, it application.ConversationItem) (conversationJSON, error) {
	c := conversationJSON{ID: it.ID, Unread: it.Unread, Accounts: make([]accountJSON, 0, len(it.Others))}
	for _, u := range it.Others {
		a, err := m.accountOf(ctx, u)
		if err != nil {
			return conversationJSON{}, err
		}
		c.Accounts = append(c.Accounts, a)
	}
	if it.Last.ID != "" {
		s, err := m.statusOf(ctx, p, it.Last)
		if err != nil {
			return conversationJSON{}, err
		}
		c.LastStatus = &s
	}
	return c, nil
}
