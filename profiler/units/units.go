// Package units formats measured quantities for people: durations, byte
// counts, SI-prefixed numbers and throughput. Each format has one helper
// here, so the TUI, the CLI, the sinks and the families print a quantity
// the same way wherever it appears.
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Sig3 prints three significant digits keeping trailing zeros (14.0,
// 1.50), for values of at least 1 (smaller ones get two decimals).
func Sig3(v float64) string {
	switch {
	case v >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// Nanos prints a duration given in nanoseconds in the unit people read at
// a glance, with three significant digits: "850 ns", "1.50 µs", "14.0 ms",
// "2.00 s"; "—" when there is none (zero, negative or NaN).
func Nanos(ns float64) string { return inTimeUnit(ns, Sig3) }

// Nanos4 is Nanos with four significant digits, for times compared
// closely (a tuning's winner against its runner-up): "909.8 µs", "125.6 ms".
func Nanos4(ns float64) string {
	return inTimeUnit(ns, func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) })
}

// inTimeUnit prints ns in s, ms, µs or ns, whichever keeps the number at
// 1 or more, with digits; "—" when there is no time.
func inTimeUnit(ns float64, digits func(float64) string) string {
	switch {
	case ns <= 0 || math.IsNaN(ns):
		return "—"
	case ns >= 1e9:
		return digits(ns/1e9) + " s"
	case ns >= 1e6:
		return digits(ns/1e6) + " ms"
	case ns >= 1e3:
		return digits(ns/1e3) + " µs"
	}
	return digits(ns) + " ns"
}

// Micros prints a kernel time given in nanoseconds as µs with one
// decimal, or as ms with two past 10 ms: "12.3 µs", "15.00 ms".
func Micros(ns float64) string {
	if ns >= 1e7 {
		return fmt.Sprintf("%.2f ms", ns/1e6)
	}
	return fmt.Sprintf("%.1f µs", ns/1e3)
}

// Millis prints a time given in microseconds as a number of milliseconds
// (no unit) with about three significant digits: 261, 44.0, 1.25, 0.044.
func Millis(us float64) string {
	ms := us / 1e3
	if ms >= 1 {
		return Sig3(ms)
	}
	return strconv.FormatFloat(ms, 'f', 3, 64)
}

// Elapsed prints a short wall-clock duration: "850 ms" under a second,
// else seconds with one decimal ("2.4 s"); negative durations read 0.
func Elapsed(d time.Duration) string {
	if d < 0 {
		d = 0
	}
	if d < time.Second {
		return fmt.Sprintf("%d ms", d.Milliseconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// Span prints a long duration roughly: 45 s, 12 min, 3.5 h, 2.1 days.
func Span(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 90:
		return fmt.Sprintf("%.0f s", s)
	case s < 90*60:
		return fmt.Sprintf("%.0f min", s/60)
	case s < 48*3600:
		return fmt.Sprintf("%.1f h", s/3600)
	}
	return fmt.Sprintf("%.1f days", s/86400)
}

// Bytes prints a size in binary units: "512 B", "1.5 KiB", "12.0 MiB",
// "2.00 GiB".
func Bytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// KiB prints a small size (threadgroup memory) compactly: "512 B",
// "32.0 KiB" — never MiB.
func KiB(n int) string {
	if n < 1024 {
		return strconv.Itoa(n) + " B"
	}
	return strconv.FormatFloat(float64(n)/1024, 'f', 1, 64) + " KiB"
}

// MB prints a size in decimal megabytes (10^6 B), with a thousands comma
// from 1,000 MB: "4.2 MB", "239 MB", "1,234 MB".
func MB(n int64) string {
	v := float64(n) / 1e6
	if v >= 1000 {
		s := strconv.FormatFloat(math.Round(v), 'f', 0, 64)
		return s[:len(s)-3] + "," + s[len(s)-3:] + " MB"
	}
	if v >= 10 {
		return fmt.Sprintf("%.0f MB", v)
	}
	return fmt.Sprintf("%.1f MB", v)
}

// SI prints x (≥ 0) in three significant digits followed by a space and a
// decimal prefix, for a unit to follow: "2.2 T", "512 " (then "FLOP").
func SI(x float64) string {
	for _, p := range []struct {
		v float64
		s string
	}{{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= p.v {
			return fmt.Sprintf("%.3g %s", x/p.v, p.s)
		}
	}
	return fmt.Sprintf("%.3g ", x)
}

// axisPrefixes are the prefixes SIAxis chooses from, largest first.
var axisPrefixes = []struct {
	scale float64
	sym   string
}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}, {1e-3, "m"}, {1e-6, "µ"}, {1e-9, "n"}}

// SIAxis prints v in three significant digits with an SI prefix and no
// space, trailing zeros dropped, short enough for a chart axis:
// 0.00081 → "810µ", 1234 → "1.23k", 877.2 → "877"; "0" for 0, NaN, ±Inf.
func SIAxis(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return "0"
	}
	p := axisPrefixes[len(axisPrefixes)-1]
	for _, q := range axisPrefixes {
		if math.Abs(v) >= q.scale*0.9995 { // 999.7 rounds to "1.00k", not "1000"
			p = q
			break
		}
	}
	x := v / p.scale
	digits := 2
	switch ax := math.Abs(x); {
	case ax >= 99.95:
		digits = 0
	case ax >= 9.995:
		digits = 1
	}
	t := strconv.FormatFloat(x, 'f', digits, 64)
	if strings.Contains(t, ".") {
		t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
	}
	return t + p.sym
}

// Throughput units: a bandwidth-bound run is judged in GB/s, a
// compute-bound one in GFLOP/s, or TFLOP/s from 1000 GFLOP/s.
const (
	GBps    = "GB/s"
	GFLOPps = "GFLOP/s"
	TFLOPps = "TFLOP/s"
)

// Throughput is the rate a run of flops and bytes in sec seconds reaches,
// in the unit that judges it: GB/s when it moves bytes with an arithmetic
// intensity below 8 FLOP per byte (or no FLOPs), else GFLOP/s, or TFLOP/s
// from 1000 GFLOP/s. ok is false when there is neither work nor time.
func Throughput(flops, bytes, sec float64) (value float64, unit string, ok bool) {
	if sec <= 0 {
		return 0, "", false
	}
	if bytes > 0 && (flops == 0 || flops/bytes < 8) {
		return bytes / sec / 1e9, GBps, true
	}
	if flops > 0 {
		g := flops / sec / 1e9
		if g >= 1000 {
			return g / 1000, TFLOPps, true
		}
		return g, GFLOPps, true
	}
	return 0, "", false
}

// Rate prints a per-second rate with a decimal prefix before unit, three
// significant digits and trailing zeros dropped, so a slow run reads as
// itself and never as 0: Rate(12.3e6, "B/s") → "12.3 MB/s",
// Rate(2.2e12, "FLOP/s") → "2.2 TFLOP/s"; "—" when there is none (zero,
// negative, NaN or Inf).
func Rate(perSec float64, unit string) string {
	if !(perSec > 0) || math.IsInf(perSec, 0) {
		return "—"
	}
	s := SIAxis(perSec)
	digits := strings.TrimRightFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	return digits + " " + s[len(digits):] + unit
}
