// Package memory implements every repository port in process memory. It is
// the reference adapter the contract suites are written against and the
// embedded default of `make run`; everything is lost when the process exits.
// Each store guards its state with one mutex, which makes every operation
// atomic (leasing included) within the process.
package memory
