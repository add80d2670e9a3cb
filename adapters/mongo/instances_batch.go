package mongo

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// UpdateMany implements ports.InstanceStore simply: Update for each
// distinct host in host order, each atomic by itself (its optimistic
// version). A failure part way returns the error with the earlier hosts
// updated; the engine records breaker changes as a best effort, so a retry
// of the whole call counts those again only if the caller retries.
func (s *InstanceStore) UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error) {
	keys := make([]string, 0, len(hosts))
	for _, h := range hosts {
		h = strings.ToLower(h)
		if h == "" {
			return nil, fmt.Errorf("%w: empty host", domain.ErrInvalidInput)
		}
		keys = append(keys, h)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	out := make(map[string]domain.RemoteInstance, len(keys))
	for _, h := range keys {
		r, err := s.Update(ctx, h, fn)
		if err != nil {
			return out, err
		}
		out[h] = r
	}
	return out, nil
}
