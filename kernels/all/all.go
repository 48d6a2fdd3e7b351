// Package all is the one list of kernel families: importing it registers
// every built-in family with the profiler. main and the tests that need the
// families import it; a new family adds one line here.
package all

import (
	_ "github.com/mltop/mltop/kernels"
)
