package mastodon

import (
	"net/http"

	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/domain"
)

// apiVersion is the Mastodon API version Herald answers as; clients read
// the leading version to pick features, and the parenthesis names Herald.
const apiVersion = "4.2.0"

// The limits the instance entity announces, which the endpoints enforce.
const (
	maxStatusChars = domain.MaxPostLength
	// Herald keeps no media yet (docs/api.md): clients are told so.
	maxMediaAttachments = 0
	maxPollOptions      = domain.MaxPollOptions
)

func (m *Routes) registerInstance(r routeAdder) {
	r.Handle("/api/v1/instance", m.public(m.instanceV1), http.MethodGet)
	r.Handle("/api/v2/instance", m.public(m.instanceV2), http.MethodGet)
	r.Handle("/api/v1/instance/rules", m.public(m.instanceRules), http.MethodGet)
	r.Handle("/api/v1/custom_emojis", m.public(m.customEmojis), http.MethodGet)
}

func (m *Routes) version() string { return apiVersion + " (compatible; Herald " + m.cfg.Version + ")" }

func (m *Routes) title() string {
	if m.cfg.Title != "" {
		return m.cfg.Title
	}
	return m.app.URLs.Domain
}

func (m *Routes) description() string {
	if m.cfg.Description != "" {
		return m.cfg.Description
	}
	return "A Herald server: ActivityPub personas and groups."
}

func (m *Routes) registrations() (enabled, approval bool) {
	switch m.cfg.Registrations {
	case domain.RegistrationsClosed:
		return false, false
	case domain.RegistrationsApproval:
		return true, true
	}
	return true, false
}

func statusesConfig() map[string]any {
	return map[string]any{"max_characters": maxStatusChars, "max_media_attachments": maxMediaAttachments, "characters_reserved_per_url": 23}
}

func mediaConfig() map[string]any {
	return map[string]any{"supported_mime_types": []string{}, "image_size_limit": 0, "image_matrix_limit": 0,
		"video_size_limit": 0, "video_frame_rate_limit": 0, "video_matrix_limit": 0}
}

func pollsConfig() map[string]any {
	return map[string]any{"max_options": maxPollOptions, "max_characters_per_option": domain.MaxPollOptionChars,
		"min_expiration": int(domain.MinPollDuration.Seconds()), "max_expiration": int(domain.MaxPollDuration.Seconds())}
}

// instanceV1 is GET /api/v1/instance (Mastodon's V1::Instance entity).
func (m *Routes) instanceV1(w http.ResponseWriter, r *http.Request, _ application.Principal, _ params) {
	usage, err := m.fed.Actors.Usage(r.Context())
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	enabled, approval := m.registrations()
	writeJSON(w, http.StatusOK, map[string]any{
		"uri": m.app.URLs.Domain, "title": m.title(), "short_description": m.description(), "description": m.description(),
		"email": m.cfg.ContactEmail, "version": m.version(),
		"urls":      map[string]any{"streaming_api": m.streamingURL()},
		"stats":     map[string]int{"user_count": usage.Users, "status_count": usage.LocalPosts, "domain_count": 0},
		"thumbnail": nil, "languages": []string{"en"},
		"registrations": enabled, "approval_required": approval, "invites_enabled": false,
		"configuration": map[string]any{
			"accounts": map[string]any{"max_featured_tags": 0},
			"statuses": statusesConfig(), "media_attachments": mediaConfig(), "polls": pollsConfig(),
		},
		"contact_account": nil, "rules": []any{},
	})
}

// instanceV2 is GET /api/v2/instance (Mastodon's Instance entity).
func (m *Routes) instanceV2(w http.ResponseWriter, r *http.Request, _ application.Principal, _ params) {
	usage, err := m.fed.Actors.Usage(r.Context())
	if err != nil {
		writeError(w, r, m.log, err)
		return
	}
	enabled, approval := m.registrations()
	writeJSON(w, http.StatusOK, map[string]any{
		"domain": m.app.URLs.Domain, "title": m.title(), "version": m.version(), "source_url": "https://github.com/heraldfed/herald",
		"description": m.description(),
		"usage":       map[string]any{"users": map[string]int{"active_month": usage.ActiveMonth}},
		"thumbnail":   map[string]any{"url": ""}, "languages": []string{"en"},
		"configuration": map[string]any{
			"urls":     map[string]any{"streaming": m.streamingURL()},
			"accounts": map[string]any{"max_featured_tags": 0, "max_pinned_statuses": 0},
			"statuses": statusesConfig(), "media_attachments": mediaConfig(), "polls": pollsConfig(),
			"translation": map[string]any{"enabled": false},
		},
		"registrations": map[string]any{"enabled": enabled, "approval_required": approval, "message": nil, "url": nil},
		"contact":       map[string]any{"email": m.cfg.ContactEmail, "account": nil},
		"rules":         []any{},
	})
}

// instanceRules is GET /api/v1/instance/rules: Herald has no server rules
// to show yet.
func (m *Routes) instanceRules(w http.ResponseWriter, _ *http.Request, _ application.Principal, _ params) {
	writeJSON(w, http.StatusOK, []any{})
}

// customEmojis is GET /api/v1/custom_emojis: Herald has none.
func (m *Routes) customEmojis(w http.ResponseWriter, _ *http.Request, _ application.Principal, _ params) {
	writeJSON(w, http.StatusOK, []any{})
}
