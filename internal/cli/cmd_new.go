package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/scaffold"
	"github.com/mltop/mltop/profiler"
)

const (
	newSummary = "write a starting kernel.yaml for your own kernel"
	newHelp    = `  mltop new NAME --from FILE.cu [--entry FN[,FN…]] [-o DIR] [--force]
                                        write a starting kernel.yaml for your own kernel
                                        (no --entry: lists the file's kernels when it has several)
`
)

type newArgs struct {
	from, entry, out string
	force            bool
}

func (a *newArgs) declare(fs *flag.FlagSet) {
	registerNoopFlags(fs)
	fs.StringVar(&a.from, "from", "", "the kernel source (.cu or .metal)")
	fs.StringVar(&a.entry, "entry", "", "the kernel function(s), comma-separated: one dispatch each, in that order (default: the file's only kernel)")
	fs.StringVar(&a.out, "o", "", "folder to write kernel.yaml into (default: the source's folder)")
	fs.BoolVar(&a.force, "force", false, "overwrite an existing kernel.yaml")
}

// runNew is `mltop new NAME --from FILE [--entry FN,…] [-o DIR] [--force]`:
// a starting kernel.yaml from the kernels' signatures. The manifest goes
// to stdout's message, what was guessed to stderr.
func runNew(_ context.Context, s *session, a *newArgs, pos []string) error {
	if len(pos) != 1 || a.from == "" {
		return badInput("usage: mltop new NAME --from FILE.cu [--entry FUNCTION[,FUNCTION…]] [-o DIR] [--force]")
	}
	if f, err := profiler.Lookup(pos[0]); err == nil {
		if _, isUser := f.(*user.Family); !isUser {
			return badInput("%s is the name of a built-in family: pick another name for your kernel", pos[0])
		}
	}
	src, err := os.ReadFile(a.from)
	if err != nil {
		return badInput("--from %s: %v: give the .cu or .metal file that holds the kernel", a.from, errors.Unwrap(err))
	}
	dir := a.out
	if dir == "" {
		dir = filepath.Dir(a.from)
	}
	var entries []string
	for _, e := range strings.Split(a.entry, ",") {
		if e = strings.TrimSpace(e); e != "" {
			entries = append(entries, e)
		}
	}
	res, err := scaffold.Manifest(scaffold.Request{Name: pos[0], SrcPath: a.from, Src: string(src), Entries: entries, Dir: dir, Read: os.ReadFile})
	if err != nil {
		return badInput("%v", err)
	}
	path := filepath.Join(dir, user.ManifestName)
	if _, err := os.Stat(path); err == nil && !a.force {
		return badInput("%s exists: pass --force to overwrite it, or -o DIR to write elsewhere", path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput("-o %s: %v", dir, err)
	}
	if err := os.WriteFile(path, []byte(res.Text), 0o644); err != nil {
		return badInput("%v", err)
	}
	fmt.Fprintf(s.stdout, "wrote %s\n", path)
	if len(res.Notes) > 0 {
		fmt.Fprintf(s.stderr, "%s: %d things to check, each a # TODO on the line to edit:\n", path, len(res.Notes))
		for _, n := range res.Notes {
			fmt.Fprintf(s.stderr, "  - %s\n", n)
		}
	}
	fmt.Fprintln(s.stdout, nextSteps(a.from, path))
	return nil
}

// nextSteps is what `new` suggests after writing manifest path from the
// source from: `check` works on any machine; a Metal kernel also runs on
// the MSL emulation without a Mac, a CUDA one only on an NVIDIA GPU.
func nextSteps(from, path string) string {
	if strings.EqualFold(filepath.Ext(from), ".metal") {
		return fmt.Sprintf("then: mltop check %s   (loads and compiles it), mltop check --run %s   (runs it against the reference: on the MSL emulation without a Mac), mltop run %s   (times it, on a Mac)", path, path, path)
	}
	return fmt.Sprintf("then: mltop check %s   (loads and compiles it, runs the reference on a tiny shape), mltop check --run %s   (runs it against the reference: on the CUDA emulation without a GPU), mltop run %s   (runs, checks and times it, on an NVIDIA GPU)", path, path, path)
}
