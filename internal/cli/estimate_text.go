package cli

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/mltop/mltop/profiler/units"
)

// durationRange says how long something takes at least and at most, for
// people: "about 2.6 h" when both ends read the same, "under 1 s" when
// even the most rounds to nothing, "up to 12 s" when the least does, else
// "2 s to 12 s". Never "0 s", never "X to X".
func durationRange(lo, hi time.Duration) string {
	loText, hiText := units.Span(lo), units.Span(hi)
	switch {
	case hi < time.Second/2:
		return "under 1 s"
	case loText == hiText:
		return "about " + hiText
	case lo < time.Second/2:
		return "up to " + hiText
	}
	return loText + " to " + hiText
}

// parseWholeNumber reads an integer as the YAML loader does: 64 and 64.0
// (or 6.4e1) are 64; 64.5 is refused rather than truncated.
func parseWholeNumber(v string) (int, error) {
	if n, err := strconv.Atoi(v); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	if f != math.Trunc(f) || math.Abs(f) > math.MaxInt32 {
		return 0, fmt.Errorf("%q is not a whole number: use an integer", v)
	}
	return int(f), nil
}
