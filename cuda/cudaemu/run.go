package cudaemu

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mltop/mltop/cuda"
	"github.com/mltop/mltop/profiler"
)

// Run writes each launch into a folder (cuda_emu_launch.h says how) and
// runs its binary there: the buffers, the parameters in the order the
// CUDA backend packs them (cuda.ParamBytes, with the buffers' addresses
// put in by the emulation where cuda.ParamRelocs says), the grid, the
// block and the dynamic shared memory.
func (e *Backend) Run(ls []profiler.Launch) error {
	for _, l := range ls {
		if l.Dispatch.Zero != "" {
			clear(l.Zero.(*profiler.HostBuffer).B)
			continue
		}
		if err := e.launch(l); err != nil {
			return err
		}
	}
	return nil
}

func (e *Backend) launch(l profiler.Launch) error {
	d := l.Dispatch
	if d.DynamicTGM > maxDynamicShared {
		return fmt.Errorf("dispatch %s: %d B of dynamic shared memory, more than the %d B a block may have (H100's opt-in limit)", d.Name, d.DynamicTGM, maxDynamicShared)
	}
	run := filepath.Join(e.dir, "run")
	if err := os.RemoveAll(run); err != nil {
		return err
	}
	if err := os.MkdirAll(run, 0o755); err != nil {
		return err
	}
	// a buffer passed twice is one memory: one file, one address
	var files []*profiler.HostBuffer
	index := map[*profiler.HostBuffer]int{}
	argFile := make([]int, len(l.Args))
	for i, a := range l.Args {
		b := a.(*profiler.HostBuffer)
		j, ok := index[b]
		if !ok {
			j = len(files)
			index[b] = j
			files = append(files, b)
		}
		argFile[i] = j
	}
	params, err := cuda.ParamBytes(d, make([]uint64, len(l.Args)))
	if err != nil {
		return err
	}
	relocs := map[int][]cuda.ParamReloc{}
	for _, r := range cuda.ParamRelocs(d) {
		relocs[r.Param] = append(relocs[r.Param], r)
	}
	var txt strings.Builder
	fmt.Fprintf(&txt, "%d %d %d %d %d %d %d\n", d.Grid[0], d.Grid[1], d.Grid[2], d.Group[0], d.Group[1], d.Group[2], d.DynamicTGM)
	syms := e.syms[l.Kernel.(kernel).bin]
	names := make([]string, 0, len(syms))
	for n := range syms {
		names = append(names, n)
	}
	fmt.Fprintf(&txt, "%d %d %d\n", len(files), len(params), len(names))
	order := d.ParamOrder()
	var all []byte
	for i, p := range params {
		kind := "s"
		if order[i].Struct {
			kind = "b"
		}
		fmt.Fprintf(&txt, "%s %d %d", kind, len(p), len(relocs[i]))
		for _, r := range relocs[i] {
			fmt.Fprintf(&txt, " %d %d", r.Offset, argFile[r.Arg])
		}
		txt.WriteString("\n")
		all = append(all, p...)
	}
	for i, n := range names {
		fmt.Fprintf(&txt, "%s %d\n", linkerName(n), len(syms[n]))
		if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("sym%d.bin", i)), syms[n], 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(run, "params.bin"), all, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(run, "launch.txt"), []byte(txt.String()), 0o644); err != nil {
		return err
	}
	for i, b := range files {
		if err := os.WriteFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)), b.B, 0o644); err != nil {
			return err
		}
	}
	if out, err := e.command(l.Kernel.(kernel).bin, run).CombinedOutput(); err != nil {
		if err := e.stopped(); err != nil {
			return fmt.Errorf("emulated %s stopped: %w", d.Name, err)
		}
		return fmt.Errorf("emulated %s: %v%s\n%s", d.Name, err, crashHint(err), bytes.TrimSpace(out))
	}
	for i, b := range files {
		got, err := os.ReadFile(filepath.Join(run, fmt.Sprintf("buf%d.bin", i)))
		if err != nil {
			return err
		}
		copy(b.B, got)
	}
	return nil
}

// crashHint says what a kernel that died of a signal most likely did.
func crashHint(err error) string {
	if !strings.Contains(err.Error(), "signal: segmentation fault") && !strings.Contains(err.Error(), "signal: bus error") {
		return ""
	}
	return " (a read or write far outside a buffer — the guard past each buffer catches only what lands within its 4096 bytes — or a thread's locals beyond the emulation's 1 MiB stack)"
}

// qualifiedName is a global's C++ name as a manifest's buffer names it:
// ns::name, without template arguments.
var qualifiedName = regexp.MustCompile(`^(?:[A-Za-z_]\w*::)*[A-Za-z_]\w*$`)

// linkerName is the name the linker knows a global by: its own name at
// namespace scope, the Itanium ABI's _ZN…E inside namespaces.
func linkerName(symbol string) string {
	parts := strings.Split(strings.TrimPrefix(symbol, "::"), "::")
	if len(parts) == 1 {
		return parts[0]
	}
	var b strings.Builder
	b.WriteString("_ZN")
	for _, p := range parts {
		fmt.Fprintf(&b, "%d%s", len(p), p)
	}
	b.WriteString("E")
	return b.String()
}

// WriteSymbol keeps src's bytes for the global symbol of k's program (a
// __constant__ table that host code fills with cudaMemcpyToSymbol): each
// launch of k writes them there before it runs. Where the binary is ELF
// the global's size is checked here, as the CUDA backend checks it.
func (e *Backend) WriteSymbol(k profiler.Kernel, symbol string, src profiler.Buffer) error {
	bin := k.(kernel).bin
	b := src.(*profiler.HostBuffer).B
	if !qualifiedName.MatchString(strings.TrimPrefix(symbol, "::")) {
		return &profiler.SymbolError{Symbol: symbol, Msg: "the CUDA emulation finds globals by a plain or namespace-qualified name (ns::table)"}
	}
	if f, err := elf.Open(bin); err == nil {
		defer f.Close()
		size, found := int64(-1), false
		syms, _ := f.Symbols()
		dyn, _ := f.DynamicSymbols()
		for _, s := range append(syms, dyn...) {
			if s.Name == linkerName(symbol) && elf.ST_TYPE(s.Info) == elf.STT_OBJECT {
				size, found = int64(s.Size), true
				break
			}
		}
		switch {
		case !found:
			return &profiler.SymbolError{Symbol: symbol, Msg: "the program has no global of that name (a __constant__ or __device__ variable at namespace scope, not static)"}
		case size != int64(len(b)):
			return &profiler.SymbolError{Symbol: symbol, Msg: fmt.Sprintf("the global has %d bytes, the buffer %d: make the buffer's shape and dtype the global's", size, len(b))}
		}
	}
	if e.syms[bin] == nil {
		e.syms[bin] = map[string][]byte{}
	}
	e.syms[bin][symbol] = bytes.Clone(b)
	return nil
}
