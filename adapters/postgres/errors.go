package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"

	"github.com/heraldfed/herald/domain"
)

// nameConstraints are the unique indexes that guard a name in the username
// space or a login name: a violation of one is "that name is taken" (HTTP
// 409 with the sign-up's wording); any other unique violation is a plain
// duplicate. The names are the stable ones the migrations and EnsureIndexes
// give these indexes.
var nameConstraints = map[string]bool{
	"reserved_names_pkey":      true,
	"root_users_user_name_key": true,
	"avatars_name_key":         true,
	"groups_name_key":          true,
}

// interpretError is the one place where driver errors become domain
// sentinels (River's interpretError, GoToSocial's processPostgresError). The
// driver error stays in the chain, after the sentinel, for logs. Context
// errors are returned as they are: the caller gave up, the store did not
// fail.
func interpretError(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: %w", domain.ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == pgerrcode.UniqueViolation:
			if nameConstraints[pgErr.ConstraintName] {
				return fmt.Errorf("%w: %w", domain.ErrNameTaken, err)
			}
			return fmt.Errorf("%w: %w", domain.ErrAlreadyExists, err)
		case pgErr.Code == pgerrcode.CheckViolation, pgErr.Code == pgerrcode.NotNullViolation,
			pgerrcode.IsDataException(pgErr.Code):
			// A value the schema refuses (a NUL byte in text, an unknown
			// state): bad input, not a broken store.
			return fmt.Errorf("%w: %w", domain.ErrInvalidInput, err)
		case pgerrcode.IsConnectionException(pgErr.Code),
			pgerrcode.IsInsufficientResources(pgErr.Code), // too many connections, disk full
			pgErr.Code == pgerrcode.AdminShutdown, pgErr.Code == pgerrcode.CrashShutdown,
			pgErr.Code == pgerrcode.CannotConnectNow:
			return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
		}
		return err
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	switch {
	case errors.As(err, &connectErr), errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, puddle.ErrClosedPool),
		pgconn.SafeToRetry(err): // failed before the server saw the query
		return fmt.Errorf("%w: %w", domain.ErrUnavailable, err)
	}
	return err
}
