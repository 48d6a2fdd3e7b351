package attnbwd

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/mltop/mltop/profiler"
	"github.com/mltop/mltop/profiler/sink"
	"github.com/mltop/mltop/profiler/units"
)

// The attention-backward report: from the CSV of a sweep such as
// configs/attention_bwd.yaml, the two tables of seed 001 — fused vs unfused
// speed (per causal/dense, per dtype) and peak device memory (unfused vs
// fused, savings %). Each cell is the best (lowest median) knob setting of
// its kernel at that shape among the rows with status ok.

// ReportFile prints the report of the sweep CSV at path, read through the
// CSV sink's decoder (a file that is not an mltop CSV is refused as such).
func ReportFile(w io.Writer, path string) error {
	rows, err := sink.ReadCSV(path)
	if err != nil {
		return err
	}
	return Report(w, rows)
}

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

// Report prints the speed-ratio and peak-memory tables of the attention
// backward from sweep rows (as sink.ReadCSV returns them). It needs rows of
// attn_bwd_unfused and of at least one fused family at the same shapes.
func Report(w io.Writer, rows []profiler.Result) error {
	best := map[string]map[reportKey]reportCell{}
	var keys []reportKey
	seen := map[reportKey]bool{}
	skipped := 0
	for _, r := range rows {
		k := r.Spec.Kernel
		if k != reportUnfused && !slices.Contains(reportFused, k) {
			continue
		}
		if r.Status != profiler.StatusOK {
			skipped++
			continue
		}
		key, err := reportKeyOf(r)
		if err != nil {
			return err
		}
		med, mem := r.Stats.Median/1e3, r.MemoryBytes
		if med <= 0 {
			continue
		}
		if best[k] == nil {
			best[k] = map[reportKey]reportCell{}
		}
		if c, ok := best[k][key]; !ok || med < c.medianUS {
			best[k][key] = reportCell{medianUS: med, memory: mem}
		}
		if !seen[key] {
			seen[key] = true
			keys = append(keys, key)
		}
	}
	if len(best[reportUnfused]) == 0 {
		return fmt.Errorf("no ok rows of %s: the report compares fused against unfused; run configs/attention_bwd.yaml (it sweeps both)", reportUnfused)
	}
	var fused []string
	for _, f := range reportFused {
		if len(best[f]) > 0 {
			fused = append(fused, f)
		}
	}
	if len(fused) == 0 {
		return fmt.Errorf("no ok rows of %s: the report compares them against %s", strings.Join(reportFused, " or "), reportUnfused)
	}
	slices.SortFunc(keys, func(a, b reportKey) int {
		for _, c := range []int{
			strings.Compare(a.dtype, b.dtype), cmpBool(a.causal, b.causal) * -1,
			a.d - b.d, a.lq - b.lq, a.lk - b.lk, a.b - b.b, a.h - b.h, a.hkv - b.hkv,
		} {
			if c != 0 {
				return c
			}
		}
		return 0
	})

	// Speed: one table per (dtype, causal).
	fmt.Fprintln(w, "Performance: fused vs unfused (speedup > 1.0x means fused is faster; best knobs per cell)")
	for _, dtype := range uniq(keys, func(k reportKey) string { return k.dtype }) {
		for _, causal := range []bool{true, false} {
			var sel []reportKey
			for _, k := range keys {
				if k.dtype == dtype && k.causal == causal {
					if _, ok := best[reportUnfused][k]; ok {
						sel = append(sel, k)
					}
				}
			}
			if len(sel) == 0 {
				continue
			}
			mode := "Dense"
			if causal {
				mode = "Causal"
			}
			fmt.Fprintf(w, "\n%s attention, %s\n", mode, dtype)
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
			head := "D\tL\tUnfused (ms)\t"
			for _, f := range fused {
				head += f + " (ms)\tSpeedup\t"
			}
			fmt.Fprintln(tw, head)
			for _, k := range sel {
				u := best[reportUnfused][k]
				line := fmt.Sprintf("%d\t%s\t%s\t", k.d, shapeL(k), units.Millis(u.medianUS))
				for _, f := range fused {
					c, ok := best[f][k]
					if !ok {
						line += "-\t-\t"
						continue
					}
					line += fmt.Sprintf("%s\t%.2fx\t", units.Millis(c.medianUS), u.medianUS/c.medianUS)
				}
				fmt.Fprintln(tw, line)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}

	// Memory: peak device memory of the plan (every buffer it allocates).
	fmt.Fprintln(w, "\nMemory: peak device memory (all buffers of the plan; MB = 10^6 B)")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "Config\tUnfused Peak\t"
	for _, f := range fused {
		head += f + " Peak\tSavings\t"
	}
	fmt.Fprintln(tw, head+"Attn Matrix Size\t")
	for _, k := range keys {
		u, ok := best[reportUnfused][k]
		if !ok {
			continue
		}
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
		line := cfg + "\t" + units.MB(u.memory) + "\t"
		for _, f := range fused {
			c, ok := best[f][k]
			if !ok {
				line += "-\t-\t"
				continue
			}
			line += fmt.Sprintf("%s\t%.0f%%\t", units.MB(c.memory), 100*(1-float64(c.memory)/float64(u.memory)))
		}
		attn := int64(k.b) * int64(k.h) * int64(k.lq) * int64(k.lk) * int64(dtypeBytes(k.dtype))
		fmt.Fprintln(tw, line+units.MB(attn)+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nAttn Matrix Size = B·H·Lq·Lk in the storage type (seed 001's column); the unfused plan holds P and dS in f32.\n")
	if skipped > 0 {
		fmt.Fprintf(w, "%s with a status other than ok %s left out.\n", profiler.Plural(skipped, "row", "rows"), map[bool]string{true: "was", false: "were"}[skipped == 1])
	}
	return nil
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
