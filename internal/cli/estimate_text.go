package cli

import (
	"time"

	"github.com/mltop/mltop/profiler/run"
)

// durationRange says how long something takes at least and at most, for
// people: "about 2.6 h" when both ends read the same, "under 1 s" when
// even the most rounds to nothing, "up to 12 s" when the least does, else
// "2 s to 12 s". Never "0 s", never "X to X".
func durationRange(lo, hi time.Duration) string {
	loText, hiText := run.FormatDuration(lo), run.FormatDuration(hi)
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
