package run

import (
	"encoding/json"
	"errors"
	"fmt"
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
// <user cache dir>/mltop/calibration/<backend>-<device>.json.
func CalibrationPath(dev profiler.DeviceInfo) (string, error) {
	dir := os.Getenv("MLTOP_CACHE_DIR")
	if dir == "" {
		base, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "mltop")
	}
	name := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, dev.Backend+"-"+dev.Name)
	return filepath.Join(dir, "calibration", name+".json"), nil
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
