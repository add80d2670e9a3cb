package application

import (
	"context"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/heraldfed/herald/domain"
)

// ReportRemote asks for a report of a remote actor to its instance (SPEC
// §11 "a persona can report a remote actor"): the persona As of the
// account UserID reports Target (an actor URI or user@host), and
// optionally some of its posts (Objects, URIs on the actor's host), with a
// comment for the other server's moderators.
type ReportRemote struct {
	UserID  string
	As      string
	Target  string
	Comment string
	Objects []string
}

// ReportedRemote says what was sent.
type ReportedRemote struct {
	ActivityID string // the Flag's id
	Target     string // the reported actor's URI
	Inbox      string // where the Flag goes
	EnqueueResult
}

// ReportRemoteHandler sends a Flag as Mastodon does: from the instance
// actor (so the other server learns which instance reports, not which
// person), its object the actor and then the posts, its content the
// comment, to the actor's instance (its shared inbox, else its inbox),
// queued as every delivery is.
type ReportRemoteHandler struct{ core *fedCore }

// Handle queues the Flag: domain.ErrForbidden when the persona is not the
// account's, domain.ErrInvalidInput for a target that is local or not an
// actor, posts that are not the target's host's, or a comment over
// domain.MaxReportComment characters; domain.ErrNotFound or
// domain.ErrUnavailable when the target cannot be resolved.
func (h ReportRemoteHandler) Handle(ctx context.Context, cmd ReportRemote) (ReportedRemote, error) {
	d := h.core.deps
	me, err := h.core.ownPersona(ctx, cmd.UserID, cmd.As)
	if err != nil {
		return ReportedRemote{}, err
	}
	comment := strings.TrimSpace(cmd.Comment)
	if n := utf8.RuneCountInString(comment); n > domain.MaxReportComment {
		return ReportedRemote{}, fmt.Errorf("%w: the comment is %d characters, at most %d", domain.ErrInvalidInput, n, domain.MaxReportComment)
	}
	if len(cmd.Objects) >= domain.MaxReportURIs {
		return ReportedRemote{}, fmt.Errorf("%w: %d posts, at most %d", domain.ErrInvalidInput, len(cmd.Objects), domain.MaxReportURIs-1)
	}
	fa, err := h.target(ctx, strings.TrimSpace(cmd.Target))
	if err != nil {
		return ReportedRemote{}, err
	}
	object := []string{fa.ActorURI}
	actorHost := hostOf(fa.ActorURI)
	for _, o := range distinct(append([]string(nil), cmd.Objects...)) {
		o = strings.TrimSpace(o)
		if !httpURL(o) || hostOf(o) != actorHost {
			return ReportedRemote{}, fmt.Errorf("%w: post %q is not a URI on %s, the reported actor's host", domain.ErrInvalidInput, clip(o), actorHost)
		}
		if o != fa.ActorURI {
			object = append(object, o)
		}
	}
	inst, err := LocalActorsHandler{core: h.core}.Instance(ctx)
	if err != nil {
		return ReportedRemote{}, fmt.Errorf("instance actor: %w", err)
	}
	flag := Activity{ID: d.URLs.Activity(inst.URI, d.IDs.NewID()), Type: "Flag", Actor: inst.URI, Object: object, Content: comment}
	inbox := fa.DeliveryInbox()
	res, err := h.core.send(ctx, inst, flag, []string{inbox})
	if err != nil {
		return ReportedRemote{}, err
	}
	d.Log.InfoContext(ctx, "report sent", "persona", me.URI, "target", fa.ActorURI, "activity", flag.ID, "posts", len(object)-1)
	return ReportedRemote{ActivityID: flag.ID, Target: fa.ActorURI, Inbox: inbox, EnqueueResult: res}, nil
}

// target resolves a remote actor given by URI or user@host.
func (h ReportRemoteHandler) target(ctx context.Context, target string) (domain.ForeignAvatar, error) {
	n, err := parseActorName(target)
	if err != nil {
		return domain.ForeignAvatar{}, err
	}
	if h.core.localName(n) {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: %s is on this server: tell its operator instead", domain.ErrInvalidInput, clip(n.text))
	}
	return h.core.resolveName(ctx, n)
}
