package mongo

import (
	"context"

	"github.com/heraldfed/herald/domain"
	"github.com/heraldfed/herald/ports"
)

// UpdateMany implements ports.InstanceStore simply: Update for each
// distinct host in host order, each atomic by itself (its optimistic
// version). A failure part way returns the error with the earlier hosts
// updated; the engine records breaker changes as a best effort, so a retry
// of the whole call counts those again only if the caller retries.
func (s *InstanceStore) UpdateMany(ctx context.Context, hosts []string, fn func(*domain.RemoteInstance)) (map[string]domain.RemoteInstance, error) {
	keys, err := ports.InstanceHosts(hosts)
	if err != nil {
		return nil, err
	}
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
