// Package fake holds test doubles shared by Herald's tests: a manual clock,
// fixed randomness, sequential ids and a scriptable deliverer. They live in
// test/ because they are fixtures, not production code.
package fake
