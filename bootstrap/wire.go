//go:build wireinject

package bootstrap

import (
	"context"
	"log/slog"

	"github.com/google/wire"

	"github.com/heraldfed/herald/adapters/delivery"
	"github.com/heraldfed/herald/adapters/sanitizer"
	"github.com/heraldfed/herald/adapters/security"
	"github.com/heraldfed/herald/adapters/system"
	"github.com/heraldfed/herald/application"
	"github.com/heraldfed/herald/application/engine"
	"github.com/heraldfed/herald/ports"
)

// systemSet binds the real clock, randomness and ids.
var systemSet = wire.NewSet(
	wire.Value(system.Clock{}), wire.Bind(new(ports.Clock), new(system.Clock)),
	wire.Value(system.Random{}), wire.Bind(new(ports.Random), new(system.Random)),
	wire.Value(system.IDs{}), wire.Bind(new(ports.IDs), new(system.IDs)),
)

// securitySet binds bcrypt, RSA key generation and the HTML sanitizer.
var securitySet = wire.NewSet(
	ProvidePasswords, wire.Bind(new(ports.PasswordHasher), new(security.Bcrypt)),
	wire.Value(security.RSAKeys{}), wire.Bind(new(ports.KeyGenerator), new(security.RSAKeys)),
	sanitizer.NewHTMLSanitizer, wire.Bind(new(ports.HTMLSanitizer), new(*sanitizer.HTMLSanitizer)),
)

// deliverySet binds the signed HTTP deliverer.
var deliverySet = wire.NewSet(
	ProvideDeliverer, wire.Bind(new(ports.Deliverer), new(*delivery.Client)),
)

// appSet builds the core and the HTTP surface over the stores.
var appSet = wire.NewSet(
	ProvideNamePolicy, ProvideURLs, ProvideObserver, ProvidePolicyObserver, ProvideModeration, ProvideApplication,
	ProvideEngine, wire.Bind(new(application.Waker), new(*engine.Engine)), wire.Bind(new(application.KeyRotations), new(*engine.Engine)),
	ProvideReadiness, ProvideProxies, ProvideHTTP, NewServerFrom,
)

// InitializeServer opens the configured store and wires one server.
func InitializeServer(ctx context.Context, cfg Config, log *slog.Logger) (*Server, func(), error) {
	wire.Build(OpenStores, systemSet, securitySet, deliverySet, appSet, operationsSet, activityPubSet, clientAPISet)
	return nil, nil, nil
}
