package pyref

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// numpyProbe prints NumPy's version, or fails when NumPy does not import.
const numpyProbe = "import numpy; print(numpy.__version__)"

// Rule is the one rule that picks the interpreter, for messages: tests
// and the product both follow it.
const Rule = "$" + PythonEnv + ", else python3 on the PATH"

// NumPy finds the interpreter by the product's rule (Interpreter) and asks
// it for NumPy's version. path is where the interpreter was found. The
// error says what is missing and how to fix it, naming MLTOP_PYTHON.
func NumPy() (path, version string, err error) {
	py, err := Interpreter()
	if err != nil {
		return "", "", err
	}
	path, _ = exec.LookPath(py)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "-c", numpyProbe).Output()
	if err != nil {
		return path, "", fmt.Errorf("check: python: %s has no NumPy: install it (apt install python3-numpy, or %s -m pip install numpy), or set %s to an interpreter that has it", path, py, PythonEnv)
	}
	return path, strings.TrimSpace(string(out)), nil
}

// Describe is one line for list and selftest: the interpreter the Python
// references run with and its NumPy version, or what is missing and how
// to fix it.
func Describe() string {
	path, version, err := NumPy()
	if err != nil {
		return strings.TrimPrefix(err.Error(), "check: ")
	}
	return fmt.Sprintf("python: %s, NumPy %s (%s)", path, version, Rule)
}
