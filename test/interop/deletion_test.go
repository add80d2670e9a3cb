package interop_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"testing"
)

// personaDeletionScenarios deletes a Herald persona that a GoToSocial
// account follows and is followed by (SPEC §11): its Delete{Person}
// reaches GoToSocial, which drops the account (its follows both ways, its
// statuses; the account itself 404 or suspended); its actor URL answers
// 410 with a Tombstone; and its name can never be signed up again. A
// fresh account (frida) with a second persona (vera), and a fresh
// GoToSocial account, so the scenarios before are untouched; vera is not
// frida's first persona, so her name is free as an account name and only
// its reservation can refuse a sign-up as vera.
func personaDeletionScenarios(t *testing.T, store string, g *gts, h *herald) {
	step := func(name string, f func(t *testing.T)) {
		if !t.Run(name, func(t *testing.T) {
			g.t, h.t = t, t
			f(t)
		}) {
			t.FailNow()
		}
		g.t, h.t = t, t
	}
	dee := g.account(store + "_dee")
	veraTok := h.signUp("frida")
	if s := h.api("POST", "/api/v1/personas", veraTok, map[string]string{"name": "vera"}, nil); s != http.StatusCreated {
		t.Fatalf("persona vera: %d", s)
	}
	veraAcct := "vera@" + h.host
	var veraID, postID string

	step("a persona followed by and following GoToSocial", func(t *testing.T) {
		eventually(t, "GoToSocial to resolve "+veraAcct, func() bool {
			veraID = dee.resolveAccount(veraAcct)
			return veraID != ""
		})
		if s := dee.call("POST", "/api/v1/accounts/"+veraID+"/follow", url.Values{}, nil); s != 200 {
			t.Fatalf("dee follows vera: %d", s)
		}
		eventually(t, "dee's follow of vera accepted", func() bool { return dee.relationship(veraID).Following })
		h.follow(veraTok, "vera", dee.uri)
		eventually(t, "vera's follow of dee accepted", func() bool { return h.follow(veraTok, "vera", dee.uri) == "accepted" })
		eventually(t, "GoToSocial to list vera as dee's follower", func() bool { return dee.relationship(veraID).FollowedBy })
		h.publish(veraTok, map[string]any{"as": "vera", "content": "soon deleted on " + store})
		eventually(t, "vera's post in dee's home timeline", func() bool {
			if st := dee.inHome("soon deleted on " + store); st != nil {
				postID = st.ID
				return true
			}
			return false
		})
	})

	step("persona deletion Herald to GoToSocial", func(t *testing.T) {
		var out map[string]any
		if s := h.api("DELETE", "/api/v1/personas/vera", veraTok, nil, &out); s != http.StatusAccepted || out["status"] != "deleting" {
			t.Fatalf("delete vera: %d %v", s, out)
		}
		req, _ := http.NewRequest("GET", h.base+"/users/vera", nil)
		req.Header.Set("Accept", "application/activity+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var tomb map[string]any
		_ = json.Unmarshal(body, &tomb)
		if resp.StatusCode != http.StatusGone || tomb["type"] != "Tombstone" || tomb["formerType"] != "Person" || tomb["id"] != h.base+"/users/vera" {
			t.Fatalf("vera's actor after the deletion: %d %s", resp.StatusCode, body)
		}
		eventually(t, "GoToSocial to drop vera's follows both ways", func() bool {
			var rs []relationship // read here: relationship() reads a failed call as none
			s := dee.call("GET", "/api/v1/accounts/relationships?id[]="+url.QueryEscape(veraID), nil, &rs)
			return s == http.StatusOK && len(rs) == 1 && !rs[0].Following && !rs[0].FollowedBy && !rs[0].Requested
		})
		eventually(t, "GoToSocial to drop vera's account (404 or suspended)", func() bool {
			var acct struct {
				Suspended bool `json:"suspended"`
			}
			s := dee.call("GET", "/api/v1/accounts/"+veraID, nil, &acct)
			return s == http.StatusNotFound || s == http.StatusGone || (s == http.StatusOK && acct.Suspended)
		})
		eventually(t, "GoToSocial to drop vera's post", func() bool { return dee.status(postID) == nil })
	})

	step("a deleted persona's name is never free again", func(t *testing.T) {
		if s := h.api("POST", "/api/v1/accounts", "", map[string]string{"username": "vera", "password": "interop horse battery"}, nil); s != http.StatusConflict {
			t.Fatalf("sign-up as vera after her deletion: %d, want 409", s)
		}
		other := h.signUp("vera_friend")
		for _, path := range []string{"/api/v1/personas", "/api/v1/groups"} {
			if s := h.api("POST", path, other, map[string]string{"name": "Vera"}, nil); s != http.StatusConflict {
				t.Fatalf("%s named vera: %d, want 409", path, s)
			}
		}
		if s := h.api("DELETE", "/api/v1/personas/vera", veraTok, nil, nil); s != http.StatusGone {
			t.Fatalf("deleting vera again: %d, want 410", s)
		}
	})

	step("no 5xx from Herald and no panic in either log after the deletion", func(t *testing.T) {
		checkLogs(t, h, g)
	})
}
