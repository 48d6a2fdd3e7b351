package run

// Test hooks for the external tests of this package.
var (
	WithRoundTrip = withRoundTrip
	DecodeChecked = decodeChecked
	Slab          = slab
)

// ProgramKey is programKey for the external tests.
var ProgramKey = programKey
