package sink

import (
	"math"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// Header is the CSV header for these columns.
func (c Columns) Header() []string {
	t := c.Table()
	h := make([]string, len(t))
	for i, col := range t {
		h[i] = col.Name
	}
	return h
}

// Row renders r under the header.
func (c Columns) Row(r profiler.Result) []string {
	t := c.Table()
	row := make([]string, len(t))
	for i, col := range t {
		row[i] = col.Encode(&r)
	}
	return row
}

// EncodeDispatchMedians renders per-dispatch medians compactly, in plan
// order: "delta=31.2;dq=1331;dkv=1868.4", a setup dispatch (a zero fill)
// marked with * after its name: "zero_dW*=3.1;rmsnorm_bwd=50". Empty for a
// single-dispatch plan (the median_us column is its figure). A ';' or '='
// in a name is written as '_'.
func EncodeDispatchMedians(ds []profiler.DispatchStats) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		name := strings.NewReplacer(";", "_", "=", "_", "\n", " ", "\r", " ").Replace(d.Name)
		if d.Setup {
			name += "*"
		}
		parts[i] = name + "=" + fnum(d.MedianNS/1e3, 6)
	}
	return strings.Join(parts, ";")
}

func optInt(m map[string]int, k string) string {
	if v, ok := m[k]; ok {
		return strconv.Itoa(v)
	}
	return ""
}

// fnum prints with sig significant digits, no exponent for ordinary sizes.
func fnum(v float64, sig int) string {
	if v == 0 {
		return "0"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', sig, 64)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	return strings.ReplaceAll(s, "\n", " | ")
}
