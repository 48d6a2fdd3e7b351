package attnbwd

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/units"
)

// The attention-backward report: from the rows of a sweep such as
// configs/attention_bwd.yaml, the two tables of seed 001 — fused vs unfused
// speed (per causal/dense, per dtype) and peak device memory (unfused vs
// fused, savings %). Each cell is the best (lowest median) knob setting of
// its kernel at that shape among the rows with status ok. It is plain data
// (profiler.Report): `mltop report` reads the CSV and prints it.

// Unfused and fused kernel names the report pairs up.
const (
	reportUnfused = "attn_bwd_unfused"
)

var reportFused = []string{"attn_bwd", "attn_bwd_atomic"}

type reportKey struct {
	dtype        string
	b, h, hkv, d int
	lq, lk       int
	causal       bool
}

type reportCell struct {
	medianUS float64
	memory   int64
}

// reportBest is the best cell of each kernel at each shape, the shapes in
// print order and how many rows were left out for their status.
type reportBest struct {
	cells   map[string]map[reportKey]reportCell
	keys    []reportKey
	fused   []string // the fused kernels with at least one cell
	skipped int
}

// Report builds the speed-ratio and peak-memory tables of the attention
// backward from sweep rows (as sink.ReadCSV returns them). It needs rows of
// attn_bwd_unfused and of at least one fused family at the same shapes.
func Report(rows []profiler.Result) (profiler.Report, error) {
	best, err := bestCells(rows)
	if err != nil {
		return nil, err
	}
	rep := profiler.Report{{Text: "Performance: fused vs unfused (speedup > 1.0x means fused is faster; best knobs per cell)\n"}}
	rep = append(rep, best.speedSections()...)
	rep = append(rep, best.memorySection())
	tail := "\nAttn Matrix Size = B·H·Lq·Lk in the storage type (seed 001's column); the unfused plan holds P and dS in f32.\n"
	if best.skipped > 0 {
		tail += fmt.Sprintf("%s with a status other than ok %s left out.\n", profiler.Plural(best.skipped, "row", "rows"), map[bool]string{true: "was", false: "were"}[best.skipped == 1])
	}
	return append(rep, profiler.ReportSection{Text: tail}), nil
}

// bestCells keeps the lowest median of each kernel at each shape among the
// ok rows, and refuses rows that cannot be compared.
func bestCells(rows []profiler.Result) (*reportBest, error) {
	best := &reportBest{cells: map[string]map[reportKey]reportCell{}}
	seen := map[reportKey]bool{}
	for _, r := range rows {
		k := r.Spec.Kernel
		if k != reportUnfused && !slices.Contains(reportFused, k) {
			continue
		}
		if r.Status != profiler.StatusOK {
			best.skipped++
			continue
		}
		key, err := reportKeyOf(r)
		if err != nil {
			return nil, err
		}
		med, mem := r.Stats.Median/1e3, r.MemoryBytes
		if med <= 0 {
			continue
		}
		if best.cells[k] == nil {
			best.cells[k] = map[reportKey]reportCell{}
		}
		if c, ok := best.cells[k][key]; !ok || med < c.medianUS {
			best.cells[k][key] = reportCell{medianUS: med, memory: mem}
		}
		if !seen[key] {
			seen[key] = true
			best.keys = append(best.keys, key)
		}
	}
	if len(best.cells[reportUnfused]) == 0 {
		return nil, fmt.Errorf("no ok rows of %s: the report compares fused against unfused; run configs/attention_bwd.yaml (it sweeps both)", reportUnfused)
	}
	for _, f := range reportFused {
		if len(best.cells[f]) > 0 {
			best.fused = append(best.fused, f)
		}
	}
	if len(best.fused) == 0 {
		return nil, fmt.Errorf("no ok rows of %s: the report compares them against %s", strings.Join(reportFused, " or "), reportUnfused)
	}
	slices.SortFunc(best.keys, compareKeys)
	return best, nil
}

// compareKeys orders shapes by dtype, causal first, then D, Lq, Lk, B, H, Hkv.
func compareKeys(a, b reportKey) int {
	for _, c := range []int{
		strings.Compare(a.dtype, b.dtype), cmpBool(a.causal, b.causal) * -1,
		a.d - b.d, a.lq - b.lq, a.lk - b.lk, a.b - b.b, a.h - b.h, a.hkv - b.hkv,
	} {
		if c != 0 {
			return c
		}
	}
	return 0
}

// speedSections is one table per (dtype, causal) of the fused kernels'
// medians against the unfused one's.
func (best *reportBest) speedSections() profiler.Report {
	var rep profiler.Report
	unfused := best.cells[reportUnfused]
	for _, dtype := range uniq(best.keys, func(k reportKey) string { return k.dtype }) {
		for _, causal := range []bool{true, false} {
			var sel []reportKey
			for _, k := range best.keys {
				if _, ok := unfused[k]; ok && k.dtype == dtype && k.causal == causal {
					sel = append(sel, k)
				}
			}
			if len(sel) == 0 {
				continue
			}
			mode := "Dense"
			if causal {
				mode = "Causal"
			}
			head := []string{"D", "L", "Unfused (ms)"}
			for _, f := range best.fused {
				head = append(head, f+" (ms)", "Speedup")
			}
			table := [][]string{head}
			for _, k := range sel {
				u := unfused[k]
				row := []string{strconv.Itoa(k.d), shapeL(k), units.Millis(u.medianUS)}
				for _, f := range best.fused {
					if c, ok := best.cells[f][k]; ok {
						row = append(row, units.Millis(c.medianUS), fmt.Sprintf("%.2fx", u.medianUS/c.medianUS))
					} else {
						row = append(row, "-", "-")
					}
				}
				table = append(table, row)
			}
			rep = append(rep, profiler.ReportSection{Text: fmt.Sprintf("\n%s attention, %s\n", mode, dtype), Table: table})
		}
	}
	return rep
}

// memorySection is the peak device memory of the plan (every buffer it
// allocates) of each kernel at each shape, and the attention matrix's size.
func (best *reportBest) memorySection() profiler.ReportSection {
	head := []string{"Config", "Unfused Peak"}
	for _, f := range best.fused {
		head = append(head, f+" Peak", "Savings")
	}
	table := [][]string{append(head, "Attn Matrix Size")}
	for _, k := range best.keys {
		u, ok := best.cells[reportUnfused][k]
		if !ok {
			continue
		}
		row := []string{configLabel(k), units.MB(u.memory)}
		for _, f := range best.fused {
			if c, ok := best.cells[f][k]; ok {
				row = append(row, units.MB(c.memory), fmt.Sprintf("%.0f%%", 100*(1-float64(c.memory)/float64(u.memory))))
			} else {
				row = append(row, "-", "-")
			}
		}
		attn := int64(k.b) * int64(k.h) * int64(k.lq) * int64(k.lk) * int64(dtypeBytes(k.dtype))
		table = append(table, append(row, units.MB(attn)))
	}
	return profiler.ReportSection{Text: "\nMemory: peak device memory (all buffers of the plan; MB = 10^6 B)\n", Table: table}
}

// configLabel names a shape in the memory table: "bf16 D=128 L=2048 causal GQA(32/8) B=2".
func configLabel(k reportKey) string {
	cfg := fmt.Sprintf("%s D=%d L=%s", k.dtype, k.d, shapeL(k))
	if k.causal {
		cfg += " causal"
	}
	if k.hkv != k.h {
		cfg += fmt.Sprintf(" GQA(%d/%d)", k.h, k.hkv)
	}
	if k.b != 1 {
		cfg += fmt.Sprintf(" B=%d", k.b)
	}
	return cfg
}

func reportKeyOf(r profiler.Result) (reportKey, error) {
	k := reportKey{dtype: string(r.Spec.DType), causal: r.Spec.Flags["causal"]}
	for _, f := range []struct {
		name string
		dst  *int
	}{{"B", &k.b}, {"H", &k.h}, {"Hkv", &k.hkv}, {"D", &k.d}, {"Lq", &k.lq}, {"Lk", &k.lk}} {
		v, ok := r.Spec.Dims[f.name]
		if !ok {
			return k, fmt.Errorf("a row of %s (%s) has no %s: the report needs the attention dims B, H, Hkv, Lq, Lk, D", r.Spec.Kernel, r.Spec, f.name)
		}
		*f.dst = v
	}
	return k, nil
}

func uniq(keys []reportKey, f func(reportKey) string) []string {
	var out []string
	for _, k := range keys {
		if s := f(k); !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

func shapeL(k reportKey) string {
	if k.lq == k.lk {
		return strconv.Itoa(k.lq)
	}
	return fmt.Sprintf("%dx%d", k.lq, k.lk)
}

func dtypeBytes(dt string) int {
	if d := profiler.DType(dt); d == profiler.F32 || d == profiler.F16 || d == profiler.BF16 {
		return d.Size()
	}
	return 2
}
