package activitypub

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// inbox serves a personal inbox (kind set, the {name} variable names the
// actor) or the shared one (kind empty). The checks run cheapest first and
// nothing is written before all of them passed: size (413), signature
// headers, date and digest (401), JSON (400), the signer's key and the
// signature itself (401), the activity's actor against the signer (401).
func (h *Handler) inbox(kind domain.NameKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		recipient := ""
		if kind != "" {
			a, err := h.localActor(r, kind)
			if err != nil {
				h.writeError(w, r, err)
				return
			}
			recipient = a.URI
		}
		// The federation policy first, on the key id's host, before the
		// body is read or any key fetched.
		if err := h.fed.Admit(ctx, keyIDHost(r)); err != nil {
			h.writeError(w, r, err)
			return
		}
		body, err := readBody(w, r, h.cfg.MaxBodyBytes)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		sig, err := parseSignature(r, body, h.clock.Now(), h.cfg.MaxClockSkew)
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		act, err := application.DecodeActivity(body)
		if err != nil {
			h.writeError(w, r, fmt.Errorf("%w: %v", errMalformed, err))
			return
		}
		if err := h.fed.Admit(ctx, hostOf(act.Actor)); err != nil {
			h.writeError(w, r, err)
			return
		}
		signer, err := h.authenticate(ctx, sig, act)
		if errors.Is(err, errGoneActor) {
			// Its key is gone (its server says so, or it deleted itself
			// before): what it left here, if anything, goes again.
			if err := h.fed.Inbox.DeletedAgain(ctx, act.Actor); err != nil {
				h.writeError(w, r, err)
				return
			}
			h.log.DebugContext(ctx, "Delete of an actor whose key is gone; nothing of it is kept", "actor", act.Actor)
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		res, err := h.fed.Inbox.Handle(ctx, application.InboxRequest{Recipient: recipient, Signer: signer, Activity: act})
		if err != nil {
			h.writeError(w, r, err)
			return
		}
		h.log.DebugContext(ctx, "activity accepted", "type", act.Type, "actor", act.Actor, "ignored", res.Ignored, "duplicate", res.Duplicate)
		w.WriteHeader(http.StatusAccepted)
	}
}

// keyIDHost is the host of the Signature's key id, "" when there is none
// to read (the signature checks refuse such a request next).
func keyIDHost(r *http.Request) string {
	value := r.Header.Get("Signature")
	if value == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 10 && strings.EqualFold(auth[:10], "signature ") {
			value = auth[10:]
		}
	}
	params, err := signatureParams(value)
	if err != nil {
		return ""
	}
	return hostOf(params["keyId"])
}

func hostOf(uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		return ""
	}
	return domain.CanonicalHost(u.Host)
}

// errGoneActor: a Delete of an actor whose server says it is gone; the
// key cannot be fetched any more, and there is nothing of it to delete
// (had we cached it, its key would have been found).
var errGoneActor = errors.New("deleted actor")

// authenticate finds the signer by keyId (cached, else fetched), verifies
// the signature, fetches the signer once more if the cached key does not
// verify (it may have rotated its key), and checks that the activity is the
// signer's own.
func (h *Handler) authenticate(ctx context.Context, sig *signature, act application.Incoming) (domain.ForeignAvatar, error) {
	fa, fresh, err := h.fed.Resolver.ByKeyID(ctx, sig.keyID)
	if err != nil {
		if errors.Is(err, domain.ErrNotFound) && errors.Is(err, domain.ErrUnauthorized) &&
			act.Type == "Delete" && act.Object.ID == act.Actor {
			return domain.ForeignAvatar{}, errGoneActor
		}
		return domain.ForeignAvatar{}, err
	}
	if verr := sig.verify(fa.PublicKeyPEM); verr != nil {
		if fresh {
			return domain.ForeignAvatar{}, verr
		}
		h.log.DebugContext(ctx, "cached key does not verify; fetching the signer again", "key_id", sig.keyID, "actor", fa.ActorURI)
		fa, err = h.fed.Resolver.Refetch(ctx, fa, sig.keyID)
		if err != nil {
			return domain.ForeignAvatar{}, err
		}
		if verr := sig.verify(fa.PublicKeyPEM); verr != nil {
			return domain.ForeignAvatar{}, verr
		}
	}
	if act.Actor != fa.ActorURI {
		return domain.ForeignAvatar{}, fmt.Errorf("%w: activity actor %q is not the signer %q", errSignature, clip(act.Actor), fa.ActorURI)
	}
	return fa, nil
}
