package application

import (
	"context"
	"fmt"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// UpdateProfile asks that a persona of the account change its display
// name or its bio (Mastodon's note). A nil field stays as it is; an empty
// one clears it (an empty display name shows the persona's name).
type UpdateProfile struct {
	UserID      string
	Persona     string
	DisplayName *string
	Note        *string
}

// ProfileUpdated says what became of it.
type ProfileUpdated struct {
	// Avatar is the persona as stored afterwards.
	Avatar domain.Avatar
	// Changed is false when both were so already: nothing was written or
	// sent.
	Changed bool
	// Queued counts the jobs of the Update{Person} sent to the followers.
	Queued int
}

// UpdateProfileHandler changes a persona's display name and bio. The
// display name is plain text: its markup is stripped with the sanitizer
// port (as GoToSocial does; Mastodon and GoToSocial read an actor's name
// as text). The bio is kept as its owner wrote it, plain text, and shown
// as HTML: escaped, paragraphs and line breaks, links (domain.RenderText),
// through the sanitizer (bioHTML), as Mastodon renders a plain bio.
// Both are cleaned first and checked against Mastodon's limits
// (domain.CheckProfile). The actor document then carries them, and an
// Update{Person} tells the followers' servers at once.
type UpdateProfileHandler struct{ core *fedCore }

// Handle applies it. A name or bio over its limit is
// domain.ErrInvalidInput naming the limit; an unknown persona
// domain.ErrNotFound, another account's domain.ErrForbidden.
func (h UpdateProfileHandler) Handle(ctx context.Context, cmd UpdateProfile) (ProfileUpdated, error) {
	d := h.core.deps
	if d.HTML == nil {
		return ProfileUpdated{}, errNoSanitizer
	}
	a, err := h.core.ownActor(ctx, cmd.UserID, domain.NameKindPersona, cmd.Persona)
	if err != nil {
		return ProfileUpdated{}, err
	}
	cur, err := d.Actors.AvatarByID(ctx, a.ID)
	if err != nil {
		return ProfileUpdated{}, err
	}
	display, note := cur.DisplayName, cur.Note
	if cmd.DisplayName != nil {
		display = domain.CleanDisplayName(d.HTML.SanitizeText(*cmd.DisplayName))
	}
	if cmd.Note != nil {
		note = domain.CleanBio(*cmd.Note)
	}
	if err := domain.CheckProfile(display, note); err != nil {
		return ProfileUpdated{}, err
	}
	if display == cur.DisplayName && note == cur.Note {
		return ProfileUpdated{Avatar: cur}, nil
	}
	if err := d.Actors.SetAvatarProfile(ctx, a.ID, display, note); err != nil {
		return ProfileUpdated{}, err
	}
	cur.DisplayName, cur.Note = display, note
	a.DisplayName, a.Summary = display, bioHTML(d.HTML, note)
	out := ProfileUpdated{Avatar: cur, Changed: true}
	d.Log.InfoContext(ctx, "persona profile changed", "actor", a.URI)
	res, err := h.core.sendUpdate(ctx, a)
	out.Queued = res.Queued
	if err != nil {
		return out, fmt.Errorf("update of %s to its followers: %w", a.URI, err)
	}
	return out, nil
}

// bioHTML is the HTML of a plain-text bio: rendered as a local post's
// text is (escaped, paragraphs, line breaks, links) and passed through
// the sanitizer all the same, so what is shown is what the sanitizer
// allows whatever a store holds. Without a sanitizer it is empty: closed,
// rather than shown unchecked.
func bioHTML(html ports.HTMLSanitizer, note string) string {
	if note == "" || html == nil {
		return ""
	}
	return html.SanitizeHTML(domain.RenderText(note, nil))
}

// NoteHTML is a persona's bio as the client API's account entity shows
// it (its note): bioHTML with the client API's sanitizer.
func (h AccountsHandler) NoteHTML(a domain.Avatar) string { return bioHTML(h.deps.HTML, a.Note) }
