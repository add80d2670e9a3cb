package mongo

// SetAfterSettleWrite makes s call f in Settle between the bulkWrite and the
// read-back of its markers, so that a test can settle the same jobs again
// in that window.
func SetAfterSettleWrite(s *JobStore, f func()) { s.afterSettleWrite = f }
