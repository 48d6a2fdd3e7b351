package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mltop/mltop/kernels/user"
)

// cmdNew is `mltop new NAME --from FILE --entry FN [-o DIR]`: a starting
// kernel.yaml from the entry's signature.
func cmdNew(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("mltop new", stderr, usage)
	registerNoopFlags(fs)
	from := fs.String("from", "", "the kernel source (.cu or .metal)")
	entry := fs.String("entry", "", "the kernel function")
	out := fs.String("o", "", "folder to write kernel.yaml into (default: the source's folder)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *from == "" || *entry == "" {
		return badInput("usage: mltop new NAME --from FILE.cu --entry FUNCTION [-o DIR]")
	}
	src, err := os.ReadFile(*from)
	if err != nil {
		return badInput("--from %s: %v: give the .cu or .metal file that holds the kernel", *from, errors.Unwrap(err))
	}
	dir := *out
	if dir == "" {
		dir = filepath.Dir(*from)
	}
	text, notes, err := user.Scaffold(pos[0], *from, string(src), *entry, dir)
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
