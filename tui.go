package main

import (
	"context"
	"io"
	"os"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/sweep"
	"github.com/mltop/mltop/ui"
)

// runTUI starts the interactive session on the chosen backend.
func runTUI(ctx context.Context, o *options, stderr io.Writer) error {
	exec, err := openExecutor(o.backend, tuiIsolate(o.isolate))
	if err != nil {
		return err
	}
	defer exec.Close()
	var lines []string
	for _, b := range probeBackends() {
		state := "missing"
		if b.available {
			state = "found"
		}
		lines = append(lines, b.name+" "+state)
	}
	base := o.measureOptions(nil)
	return ui.Run(ctx, exec, ui.Options{
		NoColor:        o.noColor || os.Getenv("NO_COLOR") != "",
		DefaultOptions: base,
		Backends:       strings.Join(lines, ", "),
		LoadSweep: func(path string) ([]profiler.Spec, profiler.Options, error) {
			sw, err := sweep.Load(path, base)
			if err != nil {
				return nil, base, err
			}
			specs := make([]profiler.Spec, len(sw.Jobs))
			for i, j := range sw.Jobs {
				specs[i] = j.Spec
			}
			return specs, sw.Jobs[0].Options, nil
		},
		WriteCSV: sink.WriteCSVFile,
	})
}

// tuiIsolate runs the session's specs in a worker by default even on the
// CPU: a Go program out of memory dies with a fatal error that no recover
// and no deferred terminal restore can catch, so it must not be the
// process that holds the terminal in raw mode. --isolate off still runs in
// process.
func tuiIsolate(flag string) string {
	if flag == "auto" {
		return "on"
	}
	return flag
}
