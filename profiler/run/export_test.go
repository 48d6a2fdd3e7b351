package run

// Test hooks for the external tests of this package.
var (
	WithRoundTrip = withRoundTrip
	DecodeChecked = decodeChecked
	Slab          = slab
)
