package run

// SelfCheck is one line of `mltop selftest`.
type SelfCheck struct {
	Name   string
	OK     bool
	Detail string
}

// SelfTester is implemented by backends with platform checks of their own
// (Metal: counter sampling support, timestamps against the wall clock).
type SelfTester interface {
	SelfTest() []SelfCheck
}
