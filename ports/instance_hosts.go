package ports

import (
	"fmt"
	"slices"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// InstanceHost is the key every InstanceStore keeps host under: lower
// case. An empty host is domain.ErrInvalidInput.
func InstanceHost(host string) (string, error) {
	if host == "" {
		return "", fmt.Errorf("%w: empty host", domain.ErrInvalidInput)
	}
	return strings.ToLower(host), nil
}

// InstanceHosts are the distinct keys of hosts (InstanceHost's), sorted:
// what InstanceStore.UpdateMany updates, in the order the stores that
// lock rows take their locks (so two callers never deadlock). One empty
// host refuses them all.
func InstanceHosts(hosts []string) ([]string, error) {
	keys := make([]string, 0, len(hosts))
	for _, h := range hosts {
		k, err := InstanceHost(h)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys), nil
}
