package application_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/application"
)

// The activities and documents the tests deliver or serve as remote
// servers would.

// follow is actor's Follow of object.
func follow(id, actor, object string) string {
	return fmt.Sprintf(`{"id":%q,"type":"Follow","actor":%q,"object":%q}`, id, actor, object)
}

// note is actor's Create of a note id to to, published at 10:00 on t0's day.
func note(id, actor, content string, to ...string) string {
	tos, _ := json.Marshal(to)
	return fmt.Sprintf(`{"id":%q,"type":"Create","actor":%q,"to":%s,"object":{"id":%q,"type":"Note","attributedTo":%q,"content":%q,"to":%s,"published":"2026-06-01T10:00:00Z"}}`,
		id+"/activity", actor, tos, id, actor, content, tos)
}

// remoteNoteDoc is a note as its server serves it.
func remoteNoteDoc(id, author, content string, to ...string) []byte {
	b, _ := json.Marshal(map[string]any{"@context": application.ASContext, "id": id, "type": "Note",
		"attributedTo": author, "content": content, "published": "2026-01-02T03:04:05Z", "to": to})
	return b
}

// daveNote is a note of dave's the tests boost and reply to.
const daveNote = "https://other.example/users/dave/statuses/1"

// announce is actor's public Announce of object.
func announce(id, actor, object string) string {
	return fmt.Sprintf(`{"id":%q,"type":"Announce","actor":%q,"object":%q,"to":[%q]}`, id, actor, object, application.ASPublic)
}

// mentionNote is actor's public note id mentioning whom.
func mentionNote(id, actor string, whom ...string) string {
	tags, cc := "", ""
	for i, w := range whom {
		if i > 0 {
			tags, cc = tags+",", cc+","
		}
		tags += fmt.Sprintf(`{"type":"Mention","href":%q,"name":"@someone"}`, w)
		cc += fmt.Sprintf("%q", w)
	}
	return fmt.Sprintf(`{"id":"%s/activity","type":"Create","actor":%q,"to":[%q],"cc":[%s],"object":{"id":%q,"type":"Note","attributedTo":%q,
"content":"<p>hi</p>","to":[%q],"cc":[%s],"tag":[%s],"published":"2026-06-01T10:00:00Z"}}`, id, actor, application.ASPublic, cc, id, actor, application.ASPublic, cc, tags)
}

// like is actor's Like of object.
func like(id, actor, object string) string {
	return `{"id":"` + id + `","type":"Like","actor":"` + actor + `","object":"` + object + `"}`
}

// question is bob's public Question id with its oneOf options (JSON) and
// any extra properties (JSON, from a leading comma).
func question(id, options string, extra string) string {
	return `{"id":"` + id + `/activity","type":"Create","actor":"` + bob + `","to":["` + application.ASPublic + `"],
"object":{"id":"` + id + `","type":"Question","attributedTo":"` + bob + `","to":["` + application.ASPublic + `"],"content":"<p>which?</p>",
 "oneOf":` + options + `,"endTime":"2026-06-02T12:00:00Z"` + extra + `}}`
}

// vote is voter's Create of its choices in alice's poll, one Note each.
func vote(voter, poll string, names ...string) string {
	var objs []string
	for i, n := range names {
		objs = append(objs, fmt.Sprintf(`{"id":"%s#votes/%d","type":"Note","name":%q,"attributedTo":%q,"to":%q,"inReplyTo":%q}`, voter, i, n, voter, alice, poll))
	}
	obj := objs[0]
	if len(objs) > 1 {
		obj = "[" + strings.Join(objs, ",") + "]"
	}
	return fmt.Sprintf(`{"id":"%s#vote/%s","type":"Create","actor":%q,"to":%q,"object":%s}`, voter, strings.Join(names, "+"), voter, alice, obj)
}

// noteMentioning is a Create of a note with a Mention tag per actor.
func noteMentioning(id, actor, content string, to []string, mentioned ...string) string {
	tags := "["
	for i, m := range mentioned {
		if i > 0 {
			tags += ","
		}
		tags += fmt.Sprintf(`{"type":"Mention","href":%q}`, m)
	}
	tags += "]"
	tos := "["
	for i, a := range to {
		if i > 0 {
			tos += ","
		}
		tos += fmt.Sprintf("%q", a)
	}
	tos += "]"
	return fmt.Sprintf(`{"id":%q,"type":"Create","actor":%q,"to":%s,"object":{"id":%q,"type":"Note","attributedTo":%q,"content":%q,"to":%s,"tag":%s,"published":"2026-06-01T10:00:00Z"}}`,
		id+"/activity", actor, tos, id, actor, content, tos, tags)
}

// replyTo is actor's public reply id to the note inReplyTo.
func replyTo(id, actor, inReplyTo string) string {
	return fmt.Sprintf(`{"id":%q,"type":"Create","actor":%q,"to":[%q],"object":{"id":%q,"type":"Note","attributedTo":%q,"content":"<p>re</p>","inReplyTo":%q,"to":[%q]}}`,
		id+"/activity", actor, application.ASPublic, id, actor, inReplyTo, application.ASPublic)
}
