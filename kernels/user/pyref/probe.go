package pyref

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// Status is what `mltop list` and `mltop selftest` say about the Python
// that runs references.
type Status struct {
	Python string // the interpreter asked for ($MLTOP_PYTHON or python3)
	Path   string // where it was found; "" when not found
	NumPy  string // NumPy's version; "" when it has none
	Err    error  // why references cannot run here, and what to do
}

// OK says whether references can run.
func (s Status) OK() bool { return s.Err == nil }

// String is one line: "python3 (/usr/bin/python3), NumPy 2.1.0", or what
// is missing and how to fix it.
func (s Status) String() string {
	if s.Err != nil {
		return s.Err.Error()
	}
	return fmt.Sprintf("%s (%s), NumPy %s", s.Python, s.Path, s.NumPy)
}

// Probe finds the interpreter and asks it for NumPy's version.
func Probe(ctx context.Context) Status {
	s := Status{Python: interpreterName()}
	py, err := Interpreter()
	if err != nil {
		s.Err = err
		return s
	}
	s.Path, _ = exec.LookPath(py)
	out, err := exec.CommandContext(ctx, py, "-c", "import numpy; print(numpy.__version__)").CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		s.Err = fmt.Errorf("%s (%s) has no NumPy (%s): install it (%s -m pip install numpy, or apt install python3-numpy), or set %s to an interpreter that has it", py, s.Path, msg, py, PythonEnv)
		return s
	}
	s.NumPy = strings.TrimSpace(string(out))
	return s
}
