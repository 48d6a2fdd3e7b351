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
		parts[i] = name + "=" + fmicros(d.MedianNS)
	}
	return strings.Join(parts, ";")
}

func optInt(m map[string]int, k string) string {
	if v, ok := m[k]; ok {
		return strconv.Itoa(v)
	}
	return ""
}

// fnum prints v with the fewest digits that read back as v exactly.
func fnum(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// fmicros writes a duration kept in ns as µs, exactly: the shortest
// decimal that reads back as ns, its point moved three places left, so
// that parseMicros returns the very float64 written (ns/1e3, then ×1e3,
// is not always ns). Plain decimals from 1e-9 µs to 1e21 µs, an exponent
// beyond.
func fmicros(ns float64) string {
	if ns == 0 || math.IsNaN(ns) || math.IsInf(ns, 0) {
		return fnum(ns / 1e3)
	}
	mant, exp, _ := strings.Cut(strconv.FormatFloat(ns, 'e', -1, 64), "e")
	e, _ := strconv.Atoi(exp)
	e -= 3
	sign := ""
	if strings.HasPrefix(mant, "-") {
		sign, mant = "-", mant[1:]
	}
	digits := strings.Replace(mant, ".", "", 1) // the value is 0.digits × 10^(e+1)
	point := e + 1                              // digits before the point
	switch {
	case e < -9 || e > 20:
		return sign + mant + "e" + strconv.Itoa(e)
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits))
	}
	return sign + digits[:point] + "." + digits[point:]
}
