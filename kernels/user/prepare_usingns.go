package user

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// missingLocalNamespaces is what the stub of a local header mltop does
// not find gets besides: the namespaces `using namespace …;` directives of
// the program name that none of its files declares, each opened empty.
// A file of a large tree (onnxruntime's rotary_embedding_impl.cu) keeps
// `using namespace onnxruntime::cuda;` for its host launcher's helpers,
// all declared in headers of the tree (core/providers/cuda/cu_inc/
// common.cuh) that are not beside it: served empty, the directive named
// no namespace and NVRTC refused the file. Opening a namespace declares
// nothing in it, so device code that needs a name from the missing header
// still fails on that name. A namespace alias of the program
// (`namespace cg = cooperative_groups;`) is left alone: opening it as a
// namespace would conflict.
func (p *prepared) missingLocalNamespaces() string {
	declared := map[string]bool{}
	aliases := map[string]bool{}
	var used []string
	for _, u := range p.units {
		for _, d := range u.scan.Decls {
			for s := d.Scope; s != ""; s = outer(s) {
				declared[s] = true
			}
			switch d.Kind {
			case csrc.Namespace:
				if len(d.Names) > 0 {
					declared[qualify(d.Scope, d.Names[0])] = true
				}
			case csrc.Alias:
				for _, n := range d.Names {
					aliases[n] = true
				}
			}
		}
		toks := csrc.Tokenize(u.code)
		for i := 0; i+2 < len(toks); i++ {
			if toks[i].Text != "using" || toks[i+1].Text != "namespace" {
				continue
			}
			var name strings.Builder
			j := i + 2
			for ; j < len(toks) && toks[j].Text != ";"; j++ {
				name.WriteString(toks[j].Text)
			}
			if n := strings.TrimPrefix(name.String(), "::"); n != "" && !slices.Contains(used, n) {
				used = append(used, n)
			}
			i = j
		}
	}
	var b strings.Builder
	for _, n := range used {
		parts := strings.Split(n, "::")
		if declared[n] || n == "std" || aliases[parts[0]] || slices.ContainsFunc(parts, func(s string) bool { return !isIdent(s) }) {
			continue
		}
		b.WriteString("namespace " + strings.Join(parts, " { namespace ") + " {" + strings.Repeat(" }", len(parts)) + "\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return "// mltop: namespaces the program's `using namespace` names, which no file found declares\n" + b.String()
}

// missingInclude is a quoted #include found neither beside the including
// file nor in include_dirs: it is served as an empty stub.
type missingInclude struct {
	header string // as included: core/common.cuh
	from   string // the including file's path
	line   int
}

// missingLocalIncludes are the program's missing quoted headers, each at
// its first #include.
func (p *prepared) missingLocalIncludes() []missingInclude {
	var out []missingInclude
	seen := map[string]bool{}
	for _, u := range p.units {
		for i, d := range u.scan.Directives {
			if d.Dead || d.Include == "" || d.System || u.local[i] != nil || seen[d.Include] {
				continue
			}
			seen[d.Include] = true
			out = append(out, missingInclude{header: d.Include, from: u.path, line: d.Line})
		}
	}
	return out
}

// missingLocalHeaders are the names of missingLocalIncludes.
func (p *prepared) missingLocalHeaders() []string {
	var out []string
	for _, m := range p.missingLocalIncludes() {
		out = append(out, m.header)
	}
	return out
}

// MissingLocalHeaders lists, for the program's CUDA source, each quoted
// #include that is neither beside the including file nor in include_dirs
// (served empty), as "k.cu:3: \"core/common.cuh\"": after a failed compile
// they are the likeliest cause of an undefined name.
func (f *Family) MissingLocalHeaders() []string {
	p := f.prep["cuda"]
	if p == nil {
		return nil
	}
	var out []string
	for _, m := range p.missingLocalIncludes() {
		out = append(out, fmt.Sprintf("%s:%d: %q", filepath.Base(m.from), m.line, m.header))
	}
	return out
}
