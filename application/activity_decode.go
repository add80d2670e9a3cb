package application

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/heraldfed/herald/domain"
)

// Incoming is an activity another server sent to one of our inboxes,
// decoded tolerantly: ActivityStreams lets most properties be a URI, an
// embedded object or an array of either, and servers use every form.
type Incoming struct {
	ID    string
	Type  string
	Actor string
	// Audience is to, cc, bto, bcc and audience together, distinct, in
	// that order.
	Audience []string
	Object   IncomingObject
	// Objects are the ids of every object when "object" is an array (a
	// Flag names several), the one object's otherwise, at most
	// maxAudience.
	Objects []string
	// Content is the activity's own content (a Flag's comment).
	Content string
	// More are the embedded objects after the first when "object" is an
	// array (a multiple-choice vote: one Note per option), at most
	// domain.MaxPollOptions.
	More []IncomingObject
}

// IncomingObject is the object of an incoming activity: a bare URI (only
// ID set), or an embedded object or activity.
type IncomingObject struct {
	ID       string
	Type     string // empty when the object is only referenced
	Actor    string // of an embedded activity (the Follow inside an Undo)
	Object   string // id of an embedded activity's object
	Author   string // attributedTo
	Content  string
	Reply    string // inReplyTo
	Publish  time.Time
	Updated  time.Time // when its author last edited it (an Update's object)
	Audience []string
	// Mentions are the hrefs of the Mention tags, distinct (GoToSocial and
	// Mastodon tag every mentioned actor).
	Mentions []string
	// Raw is the embedded object as received, for decoding it further
	// (the actor document inside an Update).
	Raw json.RawMessage
	// Name is the object's name: a poll vote's option.
	Name string
	// Extras are what a note carries beside its text, as received: plain
	// texts not yet stripped of markup, nothing checked against the
	// limits (domain.NormalizeRemoteExtras does).
	Extras domain.Extras
}

// Embedded reports whether the object came inline rather than as a URI.
func (o IncomingObject) Embedded() bool { return o.Type != "" }

// maxAudience bounds the addressees kept from one activity; the body is
// at most 1 MiB anyway, this keeps a crafted one from making huge DMs.
const maxAudience = 5000

// as2Object is the subset of ActivityStreams properties Herald reads.
type as2Object struct {
	ID           json.RawMessage `json:"id"`
	Type         json.RawMessage `json:"type"`
	Actor        json.RawMessage `json:"actor"`
	Object       json.RawMessage `json:"object"`
	AttributedTo json.RawMessage `json:"attributedTo"`
	Content      json.RawMessage `json:"content"`
	InReplyTo    json.RawMessage `json:"inReplyTo"`
	Published    json.RawMessage `json:"published"`
	Updated      json.RawMessage `json:"updated"`
	To           json.RawMessage `json:"to"`
	CC           json.RawMessage `json:"cc"`
	Bto          json.RawMessage `json:"bto"`
	Bcc          json.RawMessage `json:"bcc"`
	Audience     json.RawMessage `json:"audience"`
	Tag          json.RawMessage `json:"tag"`
	// What a note carries beside its text (SPEC §12).
	Name        json.RawMessage `json:"name"`
	Summary     json.RawMessage `json:"summary"`
	Sensitive   json.RawMessage `json:"sensitive"`
	ContentMap  json.RawMessage `json:"contentMap"`
	URL         json.RawMessage `json:"url"`
	Attachment  json.RawMessage `json:"attachment"`
	OneOf       json.RawMessage `json:"oneOf"`
	AnyOf       json.RawMessage `json:"anyOf"`
	EndTime     json.RawMessage `json:"endTime"`
	Closed      json.RawMessage `json:"closed"`
	VotersCount json.RawMessage `json:"votersCount"`
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: malformed activity: %s", domain.ErrInvalidInput, fmt.Sprintf(format, args...))
}

// DecodeActivity reads one activity. Every error wraps domain.ErrInvalidInput;
// it never panics, whatever the input (it is fuzzed).
func DecodeActivity(data []byte) (Incoming, error) {
	var raw as2Object
	if err := decodeObject(data, &raw); err != nil {
		return Incoming{}, malformed("%v", err)
	}
	a := Incoming{ID: idOf(raw.ID), Type: typeOf(raw.Type), Actor: idOf(raw.Actor)}
	if a.Type == "" {
		return Incoming{}, malformed("no type")
	}
	if len(a.Type) > 64 {
		return Incoming{}, malformed("type too long")
	}
	if !httpURL(a.Actor) {
		return Incoming{}, malformed("actor %q is not an http(s) URI", clip(a.Actor))
	}
	a.Audience = audience(raw.To, raw.CC, raw.Bto, raw.Bcc, raw.Audience)
	obj, err := decodeIncomingObject(raw.Object)
	if err != nil {
		return Incoming{}, err
	}
	a.Object = obj
	if a.More, err = moreObjects(raw.Object); err != nil {
		return Incoming{}, err
	}
	if a.Objects = urisOf(raw.Object); len(a.Objects) > maxAudience {
		a.Objects = a.Objects[:maxAudience]
	}
	a.Content = stringOf(raw.Content)
	return a, nil
}

// moreObjects decodes the embedded objects after the first of an array
// "object", at most domain.MaxPollOptions (a vote names at most that
// many options); references and the rest are left out.
func moreObjects(raw json.RawMessage) ([]IncomingObject, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, nil
	}
	items := arrayOf(raw)
	var out []IncomingObject
	for i := 1; i < len(items) && len(out) < domain.MaxPollOptions; i++ {
		item := bytes.TrimSpace(items[i])
		if len(item) == 0 || item[0] != '{' {
			continue
		}
		o, err := decodeIncomingObject(item)
		if err != nil {
			return nil, err
		}
		if o.Embedded() {
			out = append(out, o)
		}
	}
	return out, nil
}

func decodeIncomingObject(raw json.RawMessage) (IncomingObject, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return IncomingObject{}, nil
	}
	if raw[0] == '[' {
		// An array of objects: Herald acts on the first, as Mastodon does.
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return IncomingObject{}, malformed("object: %v", err)
		}
		if len(items) == 0 {
			return IncomingObject{}, nil
		}
		raw = bytes.TrimSpace(items[0])
		if len(raw) == 0 || raw[0] == '[' {
			return IncomingObject{}, malformed("object: nested arrays")
		}
	}
	if raw[0] != '{' {
		return IncomingObject{ID: idOf(raw)}, nil
	}
	var o as2Object
	if err := decodeObject(raw, &o); err != nil {
		return IncomingObject{}, malformed("object: %v", err)
	}
	obj := IncomingObject{
		ID: idOf(o.ID), Type: typeOf(o.Type), Actor: idOf(o.Actor), Object: idOf(o.Object),
		Author: idOf(o.AttributedTo), Content: stringOf(o.Content), Reply: idOf(o.InReplyTo),
		Audience: audience(o.To, o.CC, o.Bto, o.Bcc, o.Audience), Mentions: mentions(o.Tag), Raw: raw,
		Name: stringOf(o.Name),
	}
	obj.Content, obj.Extras = noteExtras(o, obj.Content)
	if obj.Type == "" {
		// An embedded object must say what it is; one without a type is
		// only a reference.
		obj = IncomingObject{ID: obj.ID}
	}
	if p := stringOf(o.Published); p != "" {
		if t, err := time.Parse(time.RFC3339, p); err == nil {
			obj.Publish = t.UTC()
		}
	}
	if u := stringOf(o.Updated); u != "" {
		if t, err := time.Parse(time.RFC3339, u); err == nil {
			obj.Updated = t.UTC()
		}
	}
	return obj, nil
}

// decodeObject unmarshals a JSON object (and nothing else) into v.
func decodeObject(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	return json.Unmarshal(data, v)
}

// stringOf reads a JSON string; anything else is "".
func stringOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// idOf reads a reference: a URI string, an object's "id", or the first
// such item of an array.
func idOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		return stringOf(raw)
	case '{':
		var o struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(raw, &o) != nil {
			return ""
		}
		return stringOf(o.ID)
	case '[':
		for _, item := range arrayOf(raw) {
			if item = bytes.TrimSpace(item); len(item) > 0 && item[0] != '[' {
				if id := idOf(item); id != "" {
					return id
				}
			}
		}
	}
	return ""
}

// typeOf reads "type": a string, or the first string of an array.
func typeOf(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		for _, item := range arrayOf(raw) {
			if s := stringOf(item); s != "" {
				return s
			}
		}
		return ""
	}
	return stringOf(raw)
}

func arrayOf(raw json.RawMessage) []json.RawMessage {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil
	}
	return items
}

// urisOf reads a property that holds references: one, or an array.
func urisOf(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '[' {
		if id := idOf(raw); id != "" {
			return []string{id}
		}
		return nil
	}
	var out []string
	for _, item := range arrayOf(raw) {
		if item = bytes.TrimSpace(item); len(item) > 0 && item[0] != '[' {
			if id := idOf(item); id != "" {
				out = append(out, id)
			}
		}
	}
	return out
}

// mentions reads the hrefs of the Mention tags of a note: tag is one
// object or an array; other tags (Hashtag, Emoji) are skipped.
func mentions(raw json.RawMessage) []string {
	raw = bytes.TrimSpace(raw)
	items := []json.RawMessage{raw}
	if len(raw) > 0 && raw[0] == '[' {
		items = arrayOf(raw)
	}
	var out []string
	for _, item := range items {
		var t struct {
			Type json.RawMessage `json:"type"`
			Href json.RawMessage `json:"href"`
		}
		if decodeObject(item, &t) != nil || typeOf(t.Type) != "Mention" {
			continue
		}
		if href := idOf(t.Href); httpURL(href) {
			out = append(out, href)
		}
	}
	out = distinct(out)
	if len(out) > maxAudience {
		out = out[:maxAudience]
	}
	return out
}

func audience(props ...json.RawMessage) []string {
	var all []string
	for _, p := range props {
		all = append(all, urisOf(p)...)
	}
	out := distinct(all)
	if len(out) > maxAudience {
		out = out[:maxAudience]
	}
	return out
}

// publicAddresses are the forms of the Public collection servers send.
var publicAddresses = map[string]bool{ASPublic: true, "as:Public": true, "Public": true}

// isPublic reports whether the audience holds the Public collection.
func isPublic(audience []string) bool {
	for _, a := range audience {
		if publicAddresses[a] {
			return true
		}
	}
	return false
}

// isCollection reports whether an addressee is a collection (followers,
// the Public one) rather than an actor. ForeignAvatar keeps no followers
// URL, so the path's convention is what tells: Mastodon, GoToSocial,
// Pleroma and Misskey all name it .../followers.
func isCollection(uri string) bool {
	return publicAddresses[uri] || strings.HasSuffix(uri, "/followers") || strings.HasSuffix(uri, "/following")
}

func httpURL(s string) bool {
	if s == "" || len(s) > 2048 {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != "" && u.Hostname() != ""
}

// hostOf is the host[:port] of an http(s) URI as Herald keeps hosts
// (domain.CanonicalHost), "" otherwise.
func hostOf(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return domain.CanonicalHost(u.Host)
}

// clip shortens untrusted text for error messages.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// RemoteActor is a remote actor document, decoded.
type RemoteActor struct {
	ID                string
	Type              string
	PreferredUsername string
	Inbox             string
	SharedInbox       string
	KeyID             string
	KeyOwner          string
	PublicKeyPEM      string
}

// actorTypes are the ActivityStreams actor types.
var actorTypes = map[string]bool{"Person": true, "Service": true, "Application": true, "Group": true, "Organization": true}

type as2Actor struct {
	ID                json.RawMessage `json:"id"`
	Type              json.RawMessage `json:"type"`
	PreferredUsername json.RawMessage `json:"preferredUsername"`
	Inbox             json.RawMessage `json:"inbox"`
	Endpoints         json.RawMessage `json:"endpoints"`
	PublicKey         json.RawMessage `json:"publicKey"`
	// Set when the document is a key rather than an actor (GoToSocial
	// serves the key at its own URL).
	Owner        json.RawMessage `json:"owner"`
	PublicKeyPem json.RawMessage `json:"publicKeyPem"`
}

type as2Key struct {
	ID           json.RawMessage `json:"id"`
	Owner        json.RawMessage `json:"owner"`
	PublicKeyPem json.RawMessage `json:"publicKeyPem"`
}

// keyDocumentOwner returns the owner of key keyID when data is not a full
// actor (it has no inbox) but holds that key: a bare key document
// ({"id","owner","publicKeyPem"}), or a document whose publicKey (one
// object or an array) has the key's id. The owner is the key's "owner",
// else the document's own id. It returns "" for a full actor and for a
// document without that key.
func keyDocumentOwner(data []byte, keyID string) string {
	var a as2Actor
	if decodeObject(data, &a) != nil {
		return ""
	}
	if len(bytes.TrimSpace(a.Inbox)) > 0 {
		return ""
	}
	if stringOf(a.PublicKeyPem) != "" {
		return idOf(a.Owner)
	}
	keys := []json.RawMessage{a.PublicKey}
	if pk := bytes.TrimSpace(a.PublicKey); len(pk) > 0 && pk[0] == '[' {
		keys = arrayOf(pk)
	}
	for _, raw := range keys {
		var k as2Key
		if decodeObject(raw, &k) != nil || idOf(k.ID) != keyID || stringOf(k.PublicKeyPem) == "" {
			continue
		}
		if owner := idOf(k.Owner); owner != "" {
			return owner
		}
		return idOf(a.ID)
	}
	return ""
}

// DecodeActor reads an actor document and checks what delivery and
// verification rely on: an http(s) id and inbox, and an RSA public key
// owned by the actor. With keyID set, the key of that id is taken (an
// actor may publish several); it is an error if there is none.
func DecodeActor(data []byte, keyID string) (RemoteActor, error) {
	var a as2Actor
	if err := decodeObject(data, &a); err != nil {
		return RemoteActor{}, fmt.Errorf("%w: actor document: %v", domain.ErrInvalidInput, err)
	}
	r := RemoteActor{
		ID: idOf(a.ID), Type: typeOf(a.Type), PreferredUsername: stringOf(a.PreferredUsername),
		Inbox: idOf(a.Inbox),
	}
	if !httpURL(r.ID) {
		return RemoteActor{}, fmt.Errorf("%w: actor id %q is not an http(s) URI", domain.ErrInvalidInput, clip(r.ID))
	}
	if !actorTypes[r.Type] {
		return RemoteActor{}, fmt.Errorf("%w: %q is not an actor type", domain.ErrInvalidInput, clip(r.Type))
	}
	if !httpURL(r.Inbox) {
		return RemoteActor{}, fmt.Errorf("%w: actor %s has no http(s) inbox", domain.ErrInvalidInput, clip(r.ID))
	}
	if len(bytes.TrimSpace(a.Endpoints)) > 0 {
		var ep struct {
			SharedInbox json.RawMessage `json:"sharedInbox"`
		}
		if decodeObject(a.Endpoints, &ep) == nil {
			if s := idOf(ep.SharedInbox); httpURL(s) {
				r.SharedInbox = s
			}
		}
	}
	keys := []json.RawMessage{a.PublicKey}
	if pk := bytes.TrimSpace(a.PublicKey); len(pk) > 0 && pk[0] == '[' {
		keys = arrayOf(pk)
	}
	for _, raw := range keys {
		var k as2Key
		if decodeObject(raw, &k) != nil {
			continue
		}
		id, owner, pemText := idOf(k.ID), idOf(k.Owner), stringOf(k.PublicKeyPem)
		if pemText == "" || (keyID != "" && id != keyID) {
			continue
		}
		r.KeyID, r.KeyOwner, r.PublicKeyPEM = id, owner, pemText
		break
	}
	if r.PublicKeyPEM == "" {
		if keyID != "" {
			return RemoteActor{}, fmt.Errorf("%w: actor %s does not publish key %s", domain.ErrUnauthorized, clip(r.ID), clip(keyID))
		}
		return RemoteActor{}, fmt.Errorf("%w: actor %s has no public key", domain.ErrInvalidInput, clip(r.ID))
	}
	if r.KeyOwner != "" && r.KeyOwner != r.ID {
		return RemoteActor{}, fmt.Errorf("%w: key %s is owned by %s, not by actor %s", domain.ErrUnauthorized, clip(r.KeyID), clip(r.KeyOwner), clip(r.ID))
	}
	if r.KeyID == "" {
		r.KeyID = r.ID + "#main-key"
	}
	if _, err := domain.ParsePublicKey(r.PublicKeyPEM); err != nil {
		return RemoteActor{}, fmt.Errorf("actor %s: %w", clip(r.ID), err)
	}
	return r, nil
}

// Avatar is the actor as cached, fetched at now.
func (r RemoteActor) Avatar(now time.Time) domain.ForeignAvatar {
	return domain.ForeignAvatar{
		ActorURI: r.ID, PublicKeyID: r.KeyID, PublicKeyPEM: r.PublicKeyPEM, Inbox: r.Inbox,
		SharedInbox: r.SharedInbox, PreferredUsername: r.PreferredUsername, Host: hostOf(r.ID),
		FetchedAt: now.UTC(),
	}
}

// decodeJRD returns the ActivityPub actor URI a WebFinger answer links to.
func decodeJRD(data []byte) (string, error) {
	var jrd struct {
		Links []struct {
			Rel  string `json:"rel"`
			Type string `json:"type"`
			Href string `json:"href"`
		} `json:"links"`
	}
	if err := decodeObject(data, &jrd); err != nil {
		return "", fmt.Errorf("%w: WebFinger answer: %v", domain.ErrInvalidInput, err)
	}
	for _, l := range jrd.Links {
		mt := strings.TrimSpace(strings.SplitN(l.Type, ";", 2)[0])
		if l.Rel == "self" && (mt == "application/activity+json" || mt == "application/ld+json") && httpURL(l.Href) {
			return l.Href, nil
		}
	}
	return "", fmt.Errorf("%w: WebFinger answer links no ActivityPub actor", domain.ErrNotFound)
}
