// Command mltop is top for GPU compute kernels: pick a kernel, its tile
// geometry, dtype and shape, run it with hardware timestamps, and see
// throughput, the threadgroup-memory budget, occupancy and correctness.
package main

import (
	"os"

	"github.com/mltop/mltop/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
