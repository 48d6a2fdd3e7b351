package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/scaffold"
	"github.com/mltop/mltop/profiler"
)

const (
	newSummary = "write a starting kernel.yaml for your own kernel"
	newHelp    = `  mltop new NAME --from FILE.cu --entry FN [-o DIR]
                                        write a starting kernel.yaml for your own kernel
`
)

type newArgs struct{ from, entry, out string }

func (a *newArgs) declare(fs *flag.FlagSet) {
	registerNoopFlags(fs)
	fs.StringVar(&a.from, "from", "", "the kernel source (.cu or .metal)")
	fs.StringVar(&a.entry, "entry", "", "the kernel function")
	fs.StringVar(&a.out, "o", "", "folder to write kernel.yaml into (default: the source's folder)")
}

// runNew is `mltop new NAME --from FILE --entry FN [-o DIR]`: a starting
// kernel.yaml from the entry's signature.
func runNew(_ context.Context, s *session, a *newArgs, pos []string) error {
	stdout, from, entry, out := s.stdout, &a.from, &a.entry, &a.out
	if len(pos) != 1 || *from == "" || *entry == "" {
		return badInput("usage: mltop new NAME --from FILE.cu --entry FUNCTION [-o DIR]")
	}
	if f, err := profiler.Lookup(pos[0]); err == nil {
		if _, isUser := f.(*user.Family); !isUser {
			return badInput("%s is the name of a built-in family: pick another name for your kernel", pos[0])
		}
	}
	src, err := os.ReadFile(*from)
	if err != nil {
		return badInput("--from %s: %v: give the .cu or .metal file that holds the kernel", *from, errors.Unwrap(err))
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(*from)
	}
	text, notes, err := scaffold.Manifest(pos[0], *from, string(src), *entry, dir)
	if err != nil {
		return badInput("%v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return badInput("-o %s: %v", dir, err)
	}
	path := filepath.Join(dir, user.ManifestName)
	if _, err := os.Stat(path); err == nil {
		return badInput("%s exists: remove it or pass -o DIR", path)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return badInput("%v", err)
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	for _, n := range notes {
		fmt.Fprintf(stdout, "  - %s\n", n)
	}
	fmt.Fprintf(stdout, "then: mltop list --kernel %s   (checks it), mltop run %s --backend cuda\n", path, path)
	return nil
}
