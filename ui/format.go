package ui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// fmtRange prints "150–156 µs", or both values with units when they differ.
func fmtRange(lo, hi float64) string {
	a, b := units.Nanos(lo), units.Nanos(hi)
	ia, ib := strings.LastIndexByte(a, ' '), strings.LastIndexByte(b, ' ')
	if ia > 0 && ib > 0 && a[ia:] == b[ib:] {
		return a[:ia] + "–" + b
	}
	return a + "–" + b
}

// fmtKiBPair prints "used/limit KiB" with one unit.
func fmtKiBPair(used, limit int) string {
	switch {
	case limit < 1024 && used < 1024:
		return fmt.Sprintf("%d/%d B", used, limit)
	case used < 1024:
		return fmt.Sprintf("%d B/%.1f KiB", used, float64(limit)/1024)
	}
	return fmt.Sprintf("%.1f/%.1f KiB", float64(used)/1024, float64(limit)/1024)
}

// fmtKiBShort is fmtKiBPair for narrow panels: "18.0/32.0K".
func fmtKiBShort(used, limit int) string {
	switch {
	case limit < 1024 && used < 1024:
		return fmt.Sprintf("%d/%dB", used, limit)
	case used < 1024:
		return fmt.Sprintf("%dB/%.1fK", used, float64(limit)/1024)
	}
	return fmt.Sprintf("%.1f/%.1fK", float64(used)/1024, float64(limit)/1024)
}

// fmtErr prints an error magnitude.
func fmtErr(v float64) string {
	if v == 0 {
		return "0"
	}
	return fmt.Sprintf("%.2e", v)
}

// metric is what the charts and the history plot for a result: FLOP/s for
// compute-bound families, bytes/s for bandwidth-bound ones (arithmetic
// intensity below 8 FLOP per byte), so softmax_bwd shows GB/s and attention
// TFLOP/s.
type metric struct {
	name  string  // "TFLOP/s", "GFLOP/s", "GB/s"
	value float64 // in that unit
}

func throughput(r profiler.Result) (metric, bool) {
	if r.Status != profiler.StatusOK && r.Status != profiler.StatusMismatch {
		return metric{}, false
	}
	if r.Stats.Median <= 0 {
		return metric{}, false
	}
	v, unit, ok := units.Throughput(r.FLOPs, r.Bytes, r.Stats.Median/1e9)
	return metric{unit, v}, ok
}

// unitFor picks one unit for a series so all points compare: the kind
// (bytes or FLOP) of the last measured result, in TFLOP/s when any point of
// that kind reaches it. Points of the other kind are left out of the chart.
func unitFor(rs []profiler.Result) string {
	unit := ""
	for i := len(rs) - 1; i >= 0 && unit == ""; i-- {
		if m, ok := throughput(rs[i]); ok {
			unit = m.name
		}
	}
	if unit != "GFLOP/s" {
		return unit
	}
	for _, r := range rs {
		if m, ok := throughput(r); ok && m.name == "TFLOP/s" {
			return "TFLOP/s"
		}
	}
	return unit
}

// inUnit converts a result's throughput to unit (0 when it has none).
func inUnit(r profiler.Result, unit string) float64 {
	m, ok := throughput(r)
	if !ok {
		return 0
	}
	switch {
	case m.name == unit:
		return m.value
	case m.name == "GFLOP/s" && unit == "TFLOP/s":
		return m.value / 1000
	case m.name == "TFLOP/s" && unit == "GFLOP/s":
		return m.value * 1000
	}
	return 0
}

func fmtThroughput(r profiler.Result) string {
	m, ok := throughput(r)
	if !ok {
		return "—"
	}
	return units.Sig3(m.value) + " " + m.name
}

// knobString is "BQ=32 BK=16 …" in schema order when the family is known.
func knobString(s profiler.Spec) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s.Knobs)) {
		parts = append(parts, k+"="+strconv.Itoa(s.Knobs[k]))
	}
	if f, err := profiler.Lookup(s.Kernel); err == nil {
		parts = parts[:0]
		for _, p := range f.Schema().Knobs {
			if v, ok := s.Knobs[p.Name]; ok {
				parts = append(parts, p.Name+"="+strconv.Itoa(v))
			}
		}
	}
	return strings.Join(parts, " ")
}

// dimString is "B=1 H=8 …" in schema order, with flags that are on.
func dimString(s profiler.Spec) string {
	var parts []string
	f, err := profiler.Lookup(s.Kernel)
	if err != nil {
		for _, k := range slices.Sorted(maps.Keys(s.Dims)) {
			parts = append(parts, k+"="+strconv.Itoa(s.Dims[k]))
		}
		return strings.Join(parts, " ")
	}
	sc := f.Schema()
	for _, p := range sc.Dims {
		if v, ok := s.Dims[p.Name]; ok {
			parts = append(parts, p.Name+"="+strconv.Itoa(v))
		}
	}
	for _, fl := range sc.Flags {
		if s.Flags[fl.Name] {
			parts = append(parts, fl.Name)
		}
	}
	return strings.Join(parts, " ")
}

// fit truncates s (which may hold ANSI styling) to w cells and pads it with
// spaces to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		s = ansi.Truncate(s, w, "…")
	}
	if n := w - ansi.StringWidth(s); n > 0 {
		s += strings.Repeat(" ", n)
	}
	return s
}

// wrap breaks plain text into lines of at most w cells, at spaces where it can.
func wrap(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			for ansi.StringWidth(word) > w { // a word longer than the line
				if line != "" {
					out = append(out, line)
					line = ""
				}
				out = append(out, ansi.Truncate(word, w, ""))
				word = ansi.Cut(word, w, ansi.StringWidth(word))
			}
			switch {
			case line == "":
				line = word
			case ansi.StringWidth(line)+1+ansi.StringWidth(word) <= w:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

func pad(s string, w int) string { return fit(s, w) }

func padLeft(s string, w int) string {
	if n := w - ansi.StringWidth(s); n > 0 {
		return strings.Repeat(" ", n) + s
	}
	return fit(s, w)
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
