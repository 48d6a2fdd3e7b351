// Command landscape-fold folds the wall times of a recorded landscape's
// JSON lines (NAME.jsonl[.gz], written by the same sweep's --json) into
// its CSV (NAME.csv[.gz]) as the wall_s column, rewriting the CSV in
// place, so that the landscape is one file:
//
//	go run ./scripts/landscape-fold [-kernel DIR] NAME.csv.gz ...
//
// -kernel registers a user kernel's manifest folder first (its knob
// columns are read as knobs). Exit 2 on bad input.
package main

import (
	"flag"
	"fmt"
	"os"

	_ "github.com/mltop/mltop/kernels/all"
	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/profiler/tune"
)

func main() {
	kernel := flag.String("kernel", "", "a user kernel's folder (kernel.yaml) to register before reading")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "landscape-fold: give the landscape CSVs to fold wall times into: go run ./scripts/landscape-fold NAME.csv.gz ...")
		os.Exit(2)
	}
	if *kernel != "" {
		if _, err := user.Register(*kernel); err != nil {
			fmt.Fprintf(os.Stderr, "landscape-fold: %v\n", err)
			os.Exit(2)
		}
	}
	for _, path := range flag.Args() {
		if err := fold(path); err != nil {
			fmt.Fprintf(os.Stderr, "landscape-fold: %v\n", err)
			os.Exit(2)
		}
	}
}

func fold(path string) error {
	rows, err := tune.LoadLandscape(path)
	if err != nil {
		return err
	}
	if n := tune.MissingWall(rows); n > 0 {
		return fmt.Errorf("%s: %d measured rows have no wall time: keep the sweep's NAME.jsonl.gz beside the CSV", path, n)
	}
	if err := tune.WriteLandscape(path, rows); err != nil {
		return err
	}
	fmt.Printf("%s: %d rows, wall times folded in\n", path, len(rows))
	return nil
}
