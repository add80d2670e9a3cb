// Package ports declares the interfaces Herald's core needs from the outside
// world: repositories, the outbound delivery of one signed activity, the
// clock and randomness. Each interface is as small as the use cases that
// consume it. Adapters implement them; only bootstrap knows which adapter is
// behind which port. Every repository port has one contract suite in
// test/contract that all adapters pass.
package ports
