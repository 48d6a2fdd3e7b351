package cuda

import (
	"fmt"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// ArchName is the NVRTC target for a compute capability. Hopper (9.0) gets
// the arch-specific "sm_90a" so that kernels may use wgmma and setmaxnreg.
func ArchName(major, minor int) string {
	if major == 9 && minor == 0 {
		return "sm_90a"
	}
	return fmt.Sprintf("sm_%d%d", major, minor)
}

// peakEntry is one product's dense (no sparsity) peak rate in FLOP/s.
// Tensor is the f16/bf16 tensor-core rate with f32 accumulation (what
// mltop's kernels do); F32 is the plain FMA rate (no TF32).
type peakEntry struct {
	match  []string // all must appear in the device name (case-insensitive)
	major  int      // compute capability major, to guard against name collisions
	tensor float64  // f16/bf16 tensor, f32 accumulate; 0: no bf16 tensor cores
	bf16   bool     // bf16 supported by the tensor cores
	f32    float64
	source string
}

// peakTable holds vendor datasheet figures. Order matters: more specific
// names first ("H100 PCIe" before "H100", "A100" before "A10").
var peakTable = []peakEntry{
	// NVIDIA H100 Tensor Core GPU datasheet: PCIe 756 TFLOP/s bf16/f16
	// dense (1,513 with sparsity), 51 TFLOP/s fp32.
	{match: []string{"H100", "PCIE"}, major: 9, tensor: 756e12, bf16: true, f32: 51.2e12, source: "H100 PCIe datasheet"},
	// H100 NVL: 1,671 TFLOP/s bf16 with sparsity (835.5 dense), 60 fp32.
	{match: []string{"H100", "NVL"}, major: 9, tensor: 835.5e12, bf16: true, f32: 60e12, source: "H100 NVL datasheet"},
	// H100 SXM5: 1,979 TFLOP/s bf16 with sparsity (989.4 dense), 67 fp32.
	{match: []string{"H100"}, major: 9, tensor: 989.4e12, bf16: true, f32: 66.9e12, source: "H100 SXM datasheet"},
	// H200 SXM: the H100 SXM's compute with more memory (H200 datasheet).
	{match: []string{"H200"}, major: 9, tensor: 989.4e12, bf16: true, f32: 66.9e12, source: "H200 datasheet"},
	// A100 (SXM and PCIe): 312 TFLOP/s bf16/f16 dense, 19.5 fp32.
	{match: []string{"A100"}, major: 8, tensor: 312e12, bf16: true, f32: 19.5e12, source: "A100 datasheet"},
	// A10: 125 TFLOP/s bf16/f16 dense, 31.2 fp32.
	{match: []string{"A10"}, major: 8, tensor: 125e12, bf16: true, f32: 31.2e12, source: "A10 datasheet"},
	// L40S: 362 TFLOP/s bf16/f16 dense (733 sparse), 91.6 fp32.
	{match: []string{"L40S"}, major: 8, tensor: 362e12, bf16: true, f32: 91.6e12, source: "L40S datasheet"},
	// L4: 121 TFLOP/s bf16/f16 dense (242 sparse), 30.3 fp32.
	{match: []string{"L4"}, major: 8, tensor: 121e12, bf16: true, f32: 30.3e12, source: "L4 datasheet"},
	// RTX 4090: 165.2 TFLOP/s f16 tensor with f32 accumulate (dense), 82.6
	// fp32 (Ada Lovelace architecture whitepaper, appendix table).
	{match: []string{"RTX 4090"}, major: 8, tensor: 165.2e12, bf16: true, f32: 82.6e12, source: "Ada whitepaper"},
	// RTX 3090: 71 TFLOP/s f16 tensor with f32 accumulate, 35.6 fp32
	// (Ampere GA102 whitepaper).
	{match: []string{"RTX 3090"}, major: 8, tensor: 71e12, bf16: true, f32: 35.6e12, source: "GA102 whitepaper"},
	// V100 SXM2: 125 TFLOP/s f16 tensor, 15.7 fp32; no bf16.
	{match: []string{"V100"}, major: 7, tensor: 125e12, f32: 15.7e12, source: "V100 datasheet"},
	// T4: 65 TFLOP/s f16 tensor, 8.1 fp32; no bf16.
	{match: []string{"T4"}, major: 7, tensor: 65e12, f32: 8.1e12, source: "T4 datasheet"},
}

// PeakFLOPS returns the datasheet peak per dtype for a device, and the
// source of the figures; nil when the device is not in the table.
func PeakFLOPS(name string, major int) (map[profiler.DType]float64, string) {
	up := strings.ToUpper(name)
	for _, e := range peakTable {
		if e.major != major {
			continue
		}
		ok := true
		for _, m := range e.match {
			if !containsWord(up, m) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		out := map[profiler.DType]float64{profiler.F32: e.f32, profiler.F16: e.tensor}
		if e.bf16 {
			out[profiler.BF16] = e.tensor
		}
		return out, e.source
	}
	return nil, ""
}

// containsWord finds m in s where it is not followed by a letter or digit,
// so "A10" does not match "A100" and "L4" does not match "L40S".
func containsWord(s, m string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], m)
		if j < 0 {
			return false
		}
		end := i + j + len(m)
		if end == len(s) || !isAlnum(s[end]) {
			return true
		}
		i = i + j + 1
	}
}

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z'
}

// PeakBandwidth is bytes/s from the memory clock (kHz) and bus width (bits):
// two transfers per clock (DDR/HBM), bus width in bytes.
func PeakBandwidth(memClockKHz, busWidthBits int) float64 {
	return 2 * float64(memClockKHz) * 1e3 * float64(busWidthBits) / 8
}
