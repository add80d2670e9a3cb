package application

import (
	"context"
	"fmt"
	"strings"

	"github.com/heraldfed/herald/domain"
)

// maxNamesListed caps the personas an error names, so an account with many
// gets a short message.
const maxNamesListed = 10

// personaOrOnly answers the persona an API call names in "as", or, when it
// names none, the account's only persona: a newcomer's account has just the
// one sign-up made, and should not have to repeat its name. An account
// with several personas must choose (domain.ErrInvalidInput naming them).
func personaOrOnly(ctx context.Context, d Deps, userID, as string) (string, error) {
	if strings.TrimSpace(as) != "" {
		return as, nil
	}
	mine, err := d.Actors.AvatarsOf(ctx, userID)
	if err != nil {
		return "", err
	}
	switch len(mine) {
	case 0:
		return "", fmt.Errorf("%w: \"as\" is missing, and this account has no persona", domain.ErrInvalidInput)
	case 1:
		return mine[0].Name, nil
	}
	names := make([]string, 0, min(len(mine), maxNamesListed))
	for _, a := range mine[:min(len(mine), maxNamesListed)] {
		names = append(names, a.Name)
	}
	more := ""
	if len(mine) > maxNamesListed {
		more = fmt.Sprintf(", … (%d in all)", len(mine))
	}
	return "", fmt.Errorf("%w: \"as\" is missing: this account has several personas, say which one acts (%s%s)",
		domain.ErrInvalidInput, strings.Join(names, ", "), more)
}
