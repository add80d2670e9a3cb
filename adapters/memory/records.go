package memory

import (
	"fmt"

	"github.com/heraldfed/herald/domain"
)

// The steps the stores repeat on a record kept in a map by id. The caller
// holds the store's mutex; noun names the record in an error, with its id
// quoted ("avatar \"a1\": not found"), formatted only when there is one.

// lookup is the record at id, domain.ErrNotFound when there is none.
func lookup[V any](m map[string]V, noun, id string) (V, error) {
	v, ok := m[id]
	if !ok {
		return v, fmt.Errorf("%s %q: %w", noun, id, domain.ErrNotFound)
	}
	return v, nil
}

// change applies fn to the record at id and stores it back.
func change[V any](m map[string]V, noun, id string, fn func(*V)) error {
	v, err := lookup(m, noun, id)
	if err != nil {
		return err
	}
	fn(&v)
	m[id] = v
	return nil
}

// drop deletes the record at id.
func drop[V any](m map[string]V, noun, id string) error {
	if _, err := lookup(m, noun, id); err != nil {
		return err
	}
	delete(m, id)
	return nil
}

// addNamed stores v at id unless the id is taken (domain.ErrAlreadyExists)
// or another record has its name (domain.ErrNameTaken): the walk of every
// record is the memory store's unique index on the name.
func addNamed[V any](m map[string]V, noun, id, name string, v V, nameOf func(V) string) error {
	if _, ok := m[id]; ok {
		return fmt.Errorf("%s %q: %w", noun, id, domain.ErrAlreadyExists)
	}
	for _, o := range m {
		if nameOf(o) == name {
			return fmt.Errorf("%s %q: %w", noun, name, domain.ErrNameTaken)
		}
	}
	m[id] = v
	return nil
}
