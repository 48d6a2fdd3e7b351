package cuda

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// entryExpression is the NVRTC name expression a program's entry is
// compiled with: a user program's Entry as written (an extern "C" name,
// ns::kernel, kernel<float, 4>), or "" for mltop's own shaders, which are
// extern "C" and looked up by their plain names as before.
func entryExpression(p profiler.Program, namesEntries bool) string {
	if p.Code == "" || !namesEntries {
		return ""
	}
	return strings.TrimSpace(p.Entry)
}

// kernelAttribute is a keyword with arguments that can sit between
// __global__ and a kernel's name.
const kernelAttribute = `__launch_bounds__\s*\([^()]*\)|__cluster_dims__\s*\([^()]*\)|__maxnreg__\s*\([^()]*\)|\[\[[^\]]*\]\]`

var (
	// globalDecl finds a __global__ declaration up to its parameter list:
	// group 1 is the return type, attributes and name.
	globalDecl      = regexp.MustCompile(`__global__\s((?:` + kernelAttribute + `|[^;{}()])*)\(`)
	kernelAttrRegex = regexp.MustCompile(kernelAttribute)
	identifier      = regexp.MustCompile(`[A-Za-z_]\w*$`)
)

// kernelNames lists the __global__ functions a source declares, by the
// name they are written with (no namespace, no template arguments), in
// order, without repeats: the suggestions when an entry is not found.
func kernelNames(src string) []string {
	var out []string
	for _, m := range globalDecl.FindAllStringSubmatch(src, -1) {
		decl := strings.TrimSpace(kernelAttrRegex.ReplaceAllString(m[1], " "))
		name := identifier.FindString(decl)
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// entryNotFound explains an entry NVRTC or the driver could not find, and
// lists the kernels the source declares.
func entryNotFound(file, entry, what string, src string) error {
	msg := fmt.Sprintf("%s has no kernel %q", file, entry)
	if what != "" {
		msg += ": " + what
	}
	if names := kernelNames(src); len(names) > 0 {
		msg += "\nkernels in " + file + ": " + strings.Join(names, ", ") +
			" (a template needs its arguments, e.g. name<float, 4>; a kernel in a namespace its full name, ns::name)"
	} else {
		msg += "\n" + file + " declares no __global__ function"
	}
	return fmt.Errorf("%s", msg)
}
