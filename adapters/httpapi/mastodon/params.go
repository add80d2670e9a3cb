package mastodon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// maxBody bounds every request body, as Herald's own API does.
const maxBody = 1 << 20

// params are a request's parameters as Mastodon reads them: from the
// query, then from a form (urlencoded or multipart) or JSON body, a later
// source adding to an earlier one. "key[]" is read as "key", and JSON
// objects are flattened to "key[sub]", as Rails parses both.
type params map[string][]string

func (p params) get(k string) string {
	if v := p[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (p params) has(k string) bool { _, ok := p[k]; return ok }

// flag reads a boolean the way Rails does ("true", "1", "on").
func (p params) flag(k string) (value, set bool) {
	v, ok := p[k]
	if !ok || len(v) == 0 {
		return false, false
	}
	switch strings.ToLower(v[0]) {
	case "true", "1", "on", "yes", "t":
		return true, true
	}
	return false, true
}

func (p params) add(k, v string) {
	k = strings.TrimSuffix(k, "[]")
	p[k] = append(p[k], v)
}

var errBadParams = errors.New("bad request")

// readParams reads the query and body parameters of r.
func readParams(w http.ResponseWriter, r *http.Request) (params, error) {
	p := params{}
	for k, vs := range r.URL.Query() {
		for _, v := range vs {
			p.add(k, v)
		}
	}
	if r.Body == nil || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return p, nil
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	switch {
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errBadParams, err)
		}
		if len(strings.TrimSpace(string(body))) == 0 {
			return p, nil
		}
		var obj map[string]any
		if err := json.Unmarshal(body, &obj); err != nil {
			return nil, fmt.Errorf("%w: the body is not a JSON object: %v", errBadParams, err)
		}
		flatten(p, "", obj)
	case mt == "multipart/form-data":
		if err := r.ParseMultipartForm(maxBody); err != nil {
			return nil, fmt.Errorf("%w: %v", errBadParams, err)
		}
		for k, vs := range r.MultipartForm.Value {
			for _, v := range vs {
				p.add(k, v)
			}
		}
	case mt == "application/x-www-form-urlencoded" || mt == "":
		if err := r.ParseForm(); err != nil {
			return nil, fmt.Errorf("%w: %v", errBadParams, err)
		}
		for k, vs := range r.PostForm {
			for _, v := range vs {
				p.add(k, v)
			}
		}
	default:
		return nil, fmt.Errorf("%w: unsupported content type %q", errBadParams, ct)
	}
	return p, nil
}

func flatten(p params, prefix string, v any) {
	key := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "[" + k + "]"
	}
	switch x := v.(type) {
	case map[string]any:
		for k, sub := range x {
			if prefix == "" {
				flatten(p, k, sub)
			} else {
				flatten(p, key(k), sub)
			}
		}
	case []any:
		for _, e := range x {
			flatten(p, prefix, e)
		}
	case string:
		p.add(prefix, x)
	case bool:
		p.add(prefix, strconv.FormatBool(x))
	case float64:
		p.add(prefix, strconv.FormatFloat(x, 'f', -1, 64))
	case nil:
		p[strings.TrimSuffix(prefix, "[]")] = append(p[strings.TrimSuffix(prefix, "[]")], "")
	}
}

// limit reads ?limit= with Mastodon's default and maximum.
func (p params) limit(def, maxLimit int) (int, error) {
	v := p.get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: limit must be a positive number", domain.ErrInvalidInput)
	}
	return min(n, maxLimit), nil
}
