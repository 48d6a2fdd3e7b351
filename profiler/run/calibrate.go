package run

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mltop/mltop/profiler"
)

// Calibration is what a device achieves on micro-kernels: the ceilings
// Results are also held against (next to the datasheet peaks).
type Calibration struct {
	Backend       string                     `json:"backend"`
	Device        string                     `json:"device"`
	Time          time.Time                  `json:"time"`
	CopyBandwidth float64                    `json:"copy_bandwidth"` // bytes/s, bytes read + bytes written
	FLOPS         map[profiler.DType]float64 `json:"flops"`          // per dtype: tensor-core/matrix path where the device has one, else FMA
	Details       []string                   `json:"details,omitempty"`
}

// Calibrator is a backend with built-in micro-kernels.
type Calibrator interface {
	Calibrate() (Calibration, error)
}

// CalibrationPath is where the calibration of a device is cached:
// profiler.CacheDir("calibration")/<backend>-<device>.json.
func CalibrationPath(dev profiler.DeviceInfo) (string, error) {
	dir, err := profiler.CacheDir("calibration")
	if err != nil {
		return "", err
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, dev.Backend+"-"+dev.Name)
	return filepath.Join(dir, name+".json"), nil
}

// LoadCalibration reads the cached calibration of dev; a missing file is
// (nil, nil).
func LoadCalibration(dev profiler.DeviceInfo) (*Calibration, error) {
	p, err := CalibrationPath(dev)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c Calibration
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s: %v (delete it or run `mltop calibrate`)", p, err)
	}
	return &c, nil
}

// SaveCalibration caches c for dev.
func SaveCalibration(dev profiler.DeviceInfo, c Calibration) (string, error) {
	p, err := CalibrationPath(dev)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	b, _ := json.MarshalIndent(c, "", "  ")
	// Through a temporary file and a rename: workers on several GPUs of one
	// model calibrate at once, and a reader must never see half a file.
	tmp, err := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".*.tmp")
	if err != nil {
		return "", err
	}
	_, werr := tmp.Write(b)
	if err := errors.Join(werr, tmp.Chmod(0o644), tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	if err := os.Rename(tmp.Name(), p); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return p, nil
}

// ApplyCalibration fills the measured ceilings of dev.
func ApplyCalibration(dev profiler.DeviceInfo, c *Calibration) profiler.DeviceInfo {
	if c == nil {
		return dev
	}
	dev.MeasuredBandwidth = c.CopyBandwidth
	dev.MeasuredFLOPS = c.FLOPS
	return dev
}

// EnsureCalibration loads the cached calibration, or, when there is none and
// the backend can calibrate, measures and caches it (the lazy first use).
func EnsureCalibration(b profiler.Backend, dev profiler.DeviceInfo) (*Calibration, error) {
	c, err := LoadCalibration(dev)
	if err != nil || c != nil {
		return c, err
	}
	cal, ok := b.(Calibrator)
	if !ok {
		return nil, nil
	}
	got, err := cal.Calibrate()
	if err != nil {
		return nil, err
	}
	if _, err := SaveCalibration(dev, got); err != nil {
		return &got, err
	}
	return &got, nil
}

// BestMedian reads a calibration kernel's timing (one dispatch per
// sample): the fastest and the median sample in ns. Zeros and empty rows
// are not samples; none gives 0, 0.
func BestMedian(samples [][]float64) (best, median float64) {
	var v []float64
	for _, row := range samples {
		if len(row) > 0 && row[0] > 0 {
			v = append(v, row[0])
		}
	}
	if len(v) == 0 {
		return 0, 0
	}
	slices.Sort(v)
	median = v[len(v)/2]
	if len(v)%2 == 0 {
		median = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return v[0], median
}

// The arithmetic of the calibration micro-kernels, the same on every
// backend (shaders/calibrate/calibrate.cu and calibrate.metal): the work a
// launch does, the iteration count that makes it last, the copy's size,
// and how a figure compares with the datasheet.

// FMAFLOPs is the work of one launch of an FMA micro-kernel: each of
// groups×threads threads runs chains independent FMAs (2 FLOPs each) per
// iteration, for iters iterations.
func FMAFLOPs(groups, threads, iters, chains int) float64 {
	return float64(groups) * float64(threads) * float64(iters) * float64(chains) * 2
}

// MatrixFLOPs is the work of one launch of a matrix micro-kernel: each
// 32-thread SIMD group of groups×threads threads (a CUDA warp, a Metal
// simdgroup) issues acc independent matrix multiply-accumulates of
// opFLOPs (2·m·n·k) per iteration, for iters iterations.
func MatrixFLOPs(groups, threads, iters, acc int, opFLOPs float64) float64 {
	return float64(groups) * float64(threads/32) * float64(iters) * float64(acc) * opFLOPs
}

// CopyTraffic is the bytes a copy of n bytes moves: n read plus n written.
func CopyTraffic(n int64) float64 { return 2 * float64(n) }

// PerSecond is work (FLOPs, bytes) over a time in nanoseconds; 0 when no
// time was measured.
func PerSecond(work, ns float64) float64 {
	if ns <= 0 {
		return 0
	}
	return work / (ns * 1e-9)
}

// CalIters is the iteration count at which a launch doing perIter FLOPs
// per iteration takes seconds at rate FLOP/s, within [16, maxIters] (16
// when the rate, the work or the time is unknown, and when maxIters is
// under 16).
func CalIters(rate, perIter, seconds float64, maxIters int) int {
	x := 16.0
	if rate > 0 && perIter > 0 && seconds > 0 {
		x = rate * seconds / perIter
	}
	if math.IsNaN(x) || x < 16 {
		x = 16
	}
	return int(min(x, float64(max(maxIters, 16))))
}

// CalCopyBytes is the size of each of the copy micro-kernel's two buffers:
// 1 GiB (many times any last-level cache) when the two fit in a quarter of
// the device's memory (0: unknown), else 8× the last-level cache (64 MiB
// when its size is unknown), never more than an eighth of the memory each,
// never under 1 MiB; a multiple of 16 bytes (the kernels copy 16-byte
// vectors).
func CalCopyBytes(mem, cache int64) int64 {
	n := int64(1 << 30)
	if mem > 0 && 2*n > mem/4 {
		n = 8 * cache
		if n <= 0 {
			n = 64 << 20
		}
		n = min(n, mem/8)
	}
	n = max(n, 1<<20)
	return n &^ 15
}

// OfDatasheet says what share of the datasheet figure spec a measured
// figure is; the datasheet figure is written in unit (spec/scale of them:
// whole from 100 up, else with one decimal).
func OfDatasheet(got, spec float64, unit string, scale float64) string {
	if spec <= 0 {
		return "no datasheet figure for this GPU"
	}
	format := "%.0f%% of the %.1f %s datasheet peak"
	if spec/scale >= 100 {
		format = "%.0f%% of the %.0f %s datasheet peak"
	}
	return fmt.Sprintf(format, 100*got/spec, spec/scale, unit)
}

// CheckCalResults reads back the per-thread results (f32) of an arithmetic
// micro-kernel: finite, and not all zero (a kernel that did nothing would
// leave zeros or the allocation's contents). It reads at most 64 KiB.
func CheckCalResults(b profiler.Backend, out profiler.Buffer, threads int, entry string) error {
	buf := make([]byte, min(out.Size(), 4*int64(threads), 1<<16))
	if err := b.Download(out, buf); err != nil {
		return err
	}
	nonzero := false
	for i := 0; i+4 <= len(buf); i += 4 {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[i:])))
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("calibration %s: result %d is %v; the micro-kernel is broken", entry, i/4, v)
		}
		nonzero = nonzero || v != 0
	}
	if !nonzero {
		return fmt.Errorf("calibration %s: every result is 0; the micro-kernel did no work", entry)
	}
	return nil
}
