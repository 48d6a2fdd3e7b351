// Package pyref runs a user's Python reference (`check: {python: ref.py}`):
// it finds the interpreter, writes the inputs as .npy files, runs the
// script's reference(inputs, dims) in a subprocess and reads back the
// arrays it returned. What to compare is the caller's business.
package pyref

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// PythonEnv names the interpreter for `check: {python: …}` (default python3).
const PythonEnv = "MLTOP_PYTHON"

// Timeout bounds one reference run.
var Timeout = 10 * time.Minute

const driver = `import sys, json, traceback
try:
    import numpy as np
except ImportError:
    sys.stderr.write("MLTOP_NO_NUMPY\n")
    sys.exit(3)
import difflib, importlib.util
d = sys.argv[1]
meta = json.load(open(d + "/meta.json"))
class Dims(dict):
    """dims, remembering the keys the reference asked for and it lacks"""
    missing = set()
    def __missing__(self, key):
        self.missing.add(key)
        raise KeyError(key)
    def hint(self, key):
        close = difflib.get_close_matches(str(key), [str(k) for k in self], 1)
        mean = "did you mean %r? " % close[0] if close else ""
        return "dims has no key %r: %sits keys are %s (the manifest's knobs, dims, flags and values, and dtype)\n" % (key, mean, ", ".join(sorted(str(k) for k in self)))
dims = Dims(meta["dims"])
spec = importlib.util.spec_from_file_location("mltop_user_ref", meta["ref"])
mod = importlib.util.module_from_spec(spec)
sys.path.insert(0, meta["dir"])
try:
    spec.loader.exec_module(mod)
    if not hasattr(mod, "reference"):
        sys.stderr.write("%s defines no function reference(inputs, dims)\n" % meta["ref"])
        sys.exit(4)
    inputs = {n: np.load(d + "/in_" + n + ".npy") for n in meta["inputs"]}
    out = mod.reference(inputs, dims)
except Exception as e:
    traceback.print_exc()
    if isinstance(e, KeyError) and e.args and e.args[0] in dims.missing:
        sys.stderr.write(dims.hint(e.args[0]))
    sys.exit(5)
if not isinstance(out, dict):
    sys.stderr.write("reference() returned %s, not a dict of arrays by output name\n" % type(out).__name__)
    sys.exit(4)
names = []
for k, v in out.items():
    a = np.asarray(v)
    if a.dtype.kind not in "fiub":
        sys.stderr.write("reference() returned %s with dtype %s: return numbers (float64)\n" % (k, a.dtype))
        sys.exit(4)
    np.save(d + "/out_" + str(k) + ".npy", np.ascontiguousarray(a), allow_pickle=False)
    names.append(str(k))
json.dump(names, open(d + "/outputs.json", "w"))
`

// Interpreter is the Python to run: $MLTOP_PYTHON, else python3, found on
// the PATH.
func Interpreter() (string, error) {
	py := interpreterName()
	if _, err := exec.LookPath(py); err != nil {
		return "", fmt.Errorf("check: python: %s not found (%v): install Python 3 with NumPy (e.g. apt install python3-numpy, or pip install numpy), or set %s to an interpreter that has NumPy", py, err, PythonEnv)
	}
	return py, nil
}

func interpreterName() string {
	if py := os.Getenv(PythonEnv); py != "" {
		return py
	}
	return "python3"
}

// Input is one array handed to reference() under its name.
type Input struct {
	Name  string
	Shape []int
	Data  []float32
	Int   bool // reaches Python as int64 (index buffers), else as float64
	// NumPy, when set, is the array's NumPy dtype instead (int8, uint8,
	// int16, uint16, uint32, float32): the buffer's own type.
	NumPy string
	// Ints, when set, are the values instead of Data, exact (an integer
	// buffer's values beyond float32's 2^24: a u32 hash, an i32 offset):
	// written as int64, or in NumPy's integer type.
	Ints []int64
}

// npyDescrs are the NumPy dtypes an Input may name, as .npy descr strings.
var npyDescrs = map[string]struct {
	descr  string
	size   int
	put    func([]byte, float32)
	putInt func([]byte, int64) // Input.Ints; nil for float32
}{
	"int8":    {"|i1", 1, func(b []byte, v float32) { b[0] = byte(int8(v)) }, func(b []byte, v int64) { b[0] = byte(v) }},
	"uint8":   {"|u1", 1, func(b []byte, v float32) { b[0] = byte(v) }, func(b []byte, v int64) { b[0] = byte(v) }},
	"int16":   {"<i2", 2, func(b []byte, v float32) { binary.LittleEndian.PutUint16(b, uint16(int16(v))) }, func(b []byte, v int64) { binary.LittleEndian.PutUint16(b, uint16(v)) }},
	"uint16":  {"<u2", 2, func(b []byte, v float32) { binary.LittleEndian.PutUint16(b, uint16(v)) }, func(b []byte, v int64) { binary.LittleEndian.PutUint16(b, uint16(v)) }},
	"uint32":  {"<u4", 4, func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, uint32(v)) }, func(b []byte, v int64) { binary.LittleEndian.PutUint32(b, uint32(v)) }},
	"float32": {"<f4", 4, func(b []byte, v float32) { binary.LittleEndian.PutUint32(b, math.Float32bits(v)) }, nil},
}

// Outputs are the arrays a reference() returned, read on demand; Close
// removes them.
type Outputs struct {
	Names  []string // the keys of the dict it returned, in its order
	dir    string
	script string
}

// Run runs reference(inputs, dims) of the Python file script with the
// interpreter py (from Interpreter).
func Run(py, script string, dims map[string]any, inputs []Input) (*Outputs, error) {
	return RunContext(context.Background(), py, script, dims, inputs)
}

// RunContext is Run, stopped when ctx is done (and after Timeout).
func RunContext(ctx context.Context, py, script string, dims map[string]any, inputs []Input) (*Outputs, error) {
	dir, err := os.MkdirTemp("", "mltop-ref-")
	if err != nil {
		return nil, err
	}
	out := &Outputs{dir: dir, script: script}
	if err := out.run(ctx, py, dims, inputs); err != nil {
		out.Close()
		return nil, err
	}
	return out, nil
}

func (o *Outputs) run(parent context.Context, py string, dims map[string]any, inputs []Input) error {
	names := []string{} // a kernel without inputs (arange) sends [], not null
	for _, in := range inputs {
		if err := writeInput(filepath.Join(o.dir, "in_"+in.Name+".npy"), in); err != nil {
			return err
		}
		names = append(names, in.Name)
	}
	meta := map[string]any{"ref": o.script, "dir": filepath.Dir(o.script), "dims": dims, "inputs": names}
	mb, _ := json.Marshal(meta)
	if err := os.WriteFile(filepath.Join(o.dir, "meta.json"), mb, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.dir, "driver.py"), []byte(driver), 0o644); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(parent, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, filepath.Join(o.dir, "driver.py"), o.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Stdout = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		switch {
		case strings.Contains(msg, "MLTOP_NO_NUMPY"):
			return fmt.Errorf("check: python: %s has no NumPy: install it (apt install python3-numpy, or %s -m pip install numpy), or set %s to an interpreter that has it", py, py, PythonEnv)
		case parent.Err() != nil:
			return fmt.Errorf("check: python: %s stopped: %w", o.script, parent.Err())
		case ctx.Err() != nil:
			return fmt.Errorf("check: python: %s did not finish in %s", o.script, Timeout)
		case errors.As(err, &ee) && ee.ExitCode() == 5:
			return fmt.Errorf("check: python: %s raised an exception:\n%s", o.script, msg)
		}
		return fmt.Errorf("check: python: %s failed (%v):\n%s", o.script, err, msg)
	}
	nb, err := os.ReadFile(filepath.Join(o.dir, "outputs.json"))
	if err == nil {
		err = json.Unmarshal(nb, &o.Names)
	}
	if err != nil {
		return fmt.Errorf("check: python: reading what %s returned: %v", o.script, err)
	}
	return nil
}

func writeInput(path string, in Input) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if d, ok := npyDescrs[in.NumPy]; ok && in.Ints != nil && d.putInt != nil {
		err = writeNPY(fh, d.descr, in.Shape, len(in.Ints), func(b []byte, i int) { d.putInt(b, in.Ints[i]) }, d.size)
	} else if ok && in.Ints == nil {
		err = writeNPY(fh, d.descr, in.Shape, len(in.Data), func(b []byte, i int) { d.put(b, in.Data[i]) }, d.size)
	} else if ok {
		err = fmt.Errorf("input %s: integer values cannot be written as NumPy %s", in.Name, in.NumPy)
	} else if in.NumPy != "" {
		err = fmt.Errorf("input %s: NumPy dtype %q is not one mltop writes", in.Name, in.NumPy)
	} else if in.Ints != nil {
		err = WriteNPYInt64(fh, in.Shape, in.Ints)
	} else if in.Int {
		iv := make([]int64, len(in.Data))
		for i, v := range in.Data {
			iv[i] = int64(v)
		}
		err = WriteNPYInt64(fh, in.Shape, iv)
	} else {
		fv := make([]float64, len(in.Data))
		for i, v := range in.Data {
			fv[i] = float64(v)
		}
		err = WriteNPY(fh, in.Shape, fv)
	}
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return err
}

// Read reads the array reference() returned under name (one of Names).
func (o *Outputs) Read(name string) (*NPY, error) {
	fh, err := os.Open(filepath.Join(o.dir, "out_"+name+".npy"))
	if err != nil {
		return nil, err
	}
	a, err := ReadNPY(fh)
	fh.Close()
	if err != nil {
		return nil, fmt.Errorf("check: python: output %s: %w", name, err)
	}
	return a, nil
}

// Close removes the exchanged files.
func (o *Outputs) Close() error { return os.RemoveAll(o.dir) }
