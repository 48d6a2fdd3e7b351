package ui

import (
	"strings"

	"github.com/mltop/mltop/profiler"
)

// cannotRunUser is the short reason user kernel name's spec is invalid on
// a backend that runs no user kernel sources: what to do first, so it fits
// a status line, naming the backend its sources are for.
func cannotRunUser(name string) string {
	return "needs a GPU backend: use " + profiler.UserBackendFlag(name)
}

// runsUserSources says whether the device's backend compiles a user
// kernel's own source. Only the CPU backend cannot: it runs the built-in
// families' Go code and refuses a Program with Code (profiler.ErrCannotRun).
func runsUserSources(dev profiler.DeviceInfo) bool { return dev.Backend != "cpu" }

// needsGPU says whether the plan holds a user kernel's own source that the
// device can never run: the editor says so instead of a green ✓.
func needsGPU(p *profiler.Plan, dev profiler.DeviceInfo) bool {
	if p == nil || runsUserSources(dev) {
		return false
	}
	for _, d := range p.Dispatches {
		if d.Program.Code != "" {
			return true
		}
	}
	return false
}

// reason is an invalid run's error with what the panel and status line
// need not repeat (profiler.Result.Reason). A user kernel refused by a
// backend that runs none reads cannotRunUser first, then the backend's
// own words.
func reason(r profiler.Result) string {
	msg := r.Reason()
	if r.CannotRun() && strings.Contains(msg, "cannot run user kernel") {
		msg = cannotRunUser(r.Spec.Kernel) + "\n" + msg
	}
	return msg
}
