package tune

import (
	"context"
	"time"

	"github.com/mltop/mltop/profiler"
)

// Replay is an executor that answers from a recorded landscape instead of
// a device: each spec gets the row recorded for it (any mltop CSV, from
// any backend), and a spec the recording lacks is invalid. It makes a
// search's behaviour testable without a GPU, deterministically.
type Replay struct {
	dev  profiler.DeviceInfo
	rows map[string]profiler.Result
	// Runs counts the specs run, by Spec.Key.
	Runs map[string]int
}

// NewReplay replays rows on a device described by dev. Where a spec has
// several rows, the last full measurement wins (a search's re-measurement
// over its brief ones).
func NewReplay(dev profiler.DeviceInfo, rows []profiler.Result) *Replay {
	r := &Replay{dev: dev, rows: map[string]profiler.Result{}, Runs: map[string]int{}}
	for _, row := range rows {
		if row.Search != nil && row.Search.Fidelity < 1 {
			if _, have := r.rows[row.Spec.Key()]; have {
				continue
			}
		}
		r.rows[row.Spec.Key()] = row
	}
	return r
}

// ReplayCSV replays the mltop CSV at path (gzipped or not, with the wall
// times of the JSON lines beside it: LoadLandscape).
func ReplayCSV(dev profiler.DeviceInfo, path string) (*Replay, error) {
	rows, err := LoadLandscape(path)
	if err != nil {
		return nil, err
	}
	return NewReplay(dev, rows), nil
}

// Device is the device the replay claims.
func (r *Replay) Device() profiler.DeviceInfo { return r.dev }

// Run answers s from the recording: its row as recorded, wall time
// included, so that a replayed search's elapsed time is the sum of its
// measurements' recorded wall times.
func (r *Replay) Run(ctx context.Context, s profiler.Spec, _ profiler.Options, _ func(profiler.Progress)) profiler.Result {
	full := s
	if _, recorded := r.rows[s.Key()]; !recorded { // a spec without its defaults: resolving plans a user kernel, so only here
		if _, f, err := profiler.Resolve(s, r.dev); err == nil {
			full = f
		}
	}
	key := full.Key()
	r.Runs[key]++
	if ctx.Err() != nil {
		return profiler.Result{Spec: full, Status: profiler.StatusCancelled, Backend: "replay", Device: r.dev.Name}
	}
	row, ok := r.rows[key]
	if !ok {
		return profiler.Result{Time: time.Unix(0, 0).UTC(), Spec: full, Backend: "replay", Device: r.dev.Name, Status: profiler.StatusInvalid,
			Error: "not in the recorded landscape"}
	}
	row.Search = nil
	return row
}

// Close does nothing.
func (r *Replay) Close() error { return nil }
