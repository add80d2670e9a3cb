package ports

import "github.com/heraldfed/herald/domain"

// InURIOrder puts the actors a store found for an InboxesOf call in the
// order of uris, each once (uris may repeat; found may come back in any
// order, as a query's rows do).
func InURIOrder(uris []string, found []domain.ActorInboxes) []domain.ActorInboxes {
	byURI := make(map[string]domain.ActorInboxes, len(found))
	for _, a := range found {
		byURI[a.ActorURI] = a
	}
	out := make([]domain.ActorInboxes, 0, len(byURI))
	for _, u := range uris {
		if a, ok := byURI[u]; ok {
			out = append(out, a)
			delete(byURI, u)
		}
	}
	return out
}
