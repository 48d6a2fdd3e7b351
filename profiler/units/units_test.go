package units

import (
	"math"
	"testing"
	"time"
)

func TestFormats(t *testing.T) {
	for _, c := range []struct {
		name, got, want string
	}{
		{"Sig3 hundreds", Sig3(261.4), "261"},
		{"Sig3 tens keeps zero", Sig3(14), "14.0"},
		{"Sig3 units", Sig3(1.5), "1.50"},
		{"Nanos none", Nanos(0), "—"},
		{"Nanos4 µs", Nanos4(909_812), "909.8 µs"},
		{"Nanos4 ms", Nanos4(125_612_000), "125.6 ms"},
		{"Nanos4 s", Nanos4(2_345_678_000), "2.346 s"},
		{"Nanos4 ns", Nanos4(832.4), "832.4 ns"},
		{"Nanos4 none", Nanos4(math.NaN()), "—"},
		{"Nanos negative", Nanos(-3), "—"},
		{"Nanos NaN", Nanos(math.NaN()), "—"},
		{"Nanos ns", Nanos(850), "850 ns"},
		{"Nanos µs", Nanos(1500), "1.50 µs"},
		{"Nanos ms", Nanos(14e6), "14.0 ms"},
		{"Nanos s", Nanos(2e9), "2.00 s"},
		{"Nanos µs hundreds", Nanos(153e3), "153 µs"},
		{"Nanos s fraction", Nanos(1.5e9), "1.50 s"},
		{"Micros µs", Micros(12_340), "12.3 µs"},
		{"Micros just under 10 ms", Micros(9_999_000), "9999.0 µs"},
		{"Micros ms", Micros(15e6), "15.00 ms"},
		{"Millis hundreds", Millis(261_000), "261"},
		{"Millis tens", Millis(44_000), "44.0"},
		{"Millis units", Millis(1_250), "1.25"},
		{"Millis below one", Millis(44), "0.044"},
		{"Elapsed negative", Elapsed(-time.Second), "0 ms"},
		{"Elapsed ms", Elapsed(850 * time.Millisecond), "850 ms"},
		{"Elapsed s", Elapsed(2400 * time.Millisecond), "2.4 s"},
		{"Span s", Span(45 * time.Second), "45 s"},
		{"Span min", Span(12 * time.Minute), "12 min"},
		{"Span h", Span(210 * time.Minute), "3.5 h"},
		{"Span days", Span(50 * time.Hour), "2.1 days"},
		{"Bytes B", Bytes(512), "512 B"},
		{"Bytes KiB", Bytes(1536), "1.5 KiB"},
		{"Bytes MiB", Bytes(12 << 20), "12.0 MiB"},
		{"Bytes GiB", Bytes(2 << 30), "2.00 GiB"},
		{"KiB B", KiB(1023), "1023 B"},
		{"KiB KiB", KiB(32 << 10), "32.0 KiB"},
		{"KiB never MiB", KiB(2 << 20), "2048.0 KiB"},
		{"MB small", MB(4_200_000), "4.2 MB"},
		{"MB tens", MB(239_000_000), "239 MB"},
		{"MB thousands comma", MB(1_234_400_000), "1,234 MB"},
		{"SI plain", SI(512), "512 "},
		{"SI k", SI(1500), "1.5 k"},
		{"SI T", SI(2.2e12), "2.2 T"},
		{"SI P", SI(3e15), "3 P"},
		{"SIAxis zero", SIAxis(0), "0"},
		{"SIAxis Inf", SIAxis(math.Inf(1)), "0"},
		{"SIAxis µ", SIAxis(0.00081), "810µ"},
		{"SIAxis k", SIAxis(1234), "1.23k"},
		{"SIAxis rounds up a prefix", SIAxis(999.7), "1k"},
		{"SIAxis plain", SIAxis(877.2), "877"},
		{"SIAxis negative", SIAxis(-2.5e9), "-2.5G"},
		{"SIAxis negative milli", SIAxis(-0.004), "-4m"},
		{"SIAxis T", SIAxis(2.5e12), "2.5T"},
		{"SIAxis tens", SIAxis(58.48), "58.5"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestThroughput(t *testing.T) {
	for _, c := range []struct {
		name              string
		flops, bytes, sec float64
		value             float64
		unit              string
		ok                bool
	}{
		{"bandwidth-bound", 1e9, 1e9, 1, 1, GBps, true},
		{"bytes only", 0, 2e9, 1, 2, GBps, true},
		{"compute-bound GFLOP/s", 8e11, 1e9, 1, 800, GFLOPps, true},
		{"compute-bound TFLOP/s", 2e12, 1e9, 1, 2, TFLOPps, true},
		{"no work", 0, 0, 1, 0, "", false},
		{"no time", 1e9, 1e9, 0, 0, "", false},
	} {
		v, u, ok := Throughput(c.flops, c.bytes, c.sec)
		if v != c.value || u != c.unit || ok != c.ok {
			t.Errorf("%s: %v %q %v, want %v %q %v", c.name, v, u, ok, c.value, c.unit, c.ok)
		}
	}
}

func TestRate(t *testing.T) {
	for _, c := range []struct {
		v    float64
		unit string
		want string
	}{
		{12.3e6, "B/s", "12.3 MB/s"},
		{2.2e12, "FLOP/s", "2.2 TFLOP/s"},
		{812e9, "B/s", "812 GB/s"},
		{512, "B/s", "512 B/s"},
		{999.7e6, "B/s", "1 GB/s"},
		{0, "B/s", "—"},
		{-1, "B/s", "—"},
		{math.NaN(), "B/s", "—"},
		{math.Inf(1), "B/s", "—"},
	} {
		if got := Rate(c.v, c.unit); got != c.want {
			t.Errorf("Rate(%v, %q) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
}
