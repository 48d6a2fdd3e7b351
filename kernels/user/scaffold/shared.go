package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// sharedDecl matches a static shared array: CUDA __shared__ or Metal
// threadgroup, a type, a name and one or more [extent]s.
var sharedDecl = regexp.MustCompile(`(?m)(extern\s+)?(?:__shared__|\bthreadgroup)\s+(?:volatile\s+)?(?:__align__\(\d+\)\s+)?([A-Za-z_][\w:]*)\s+([A-Za-z_]\w*)\s*((?:\[[^\]]*\]\s*)+)`)

// extentRE is one [extent] of a declaration.
var extentRE = regexp.MustCompile(`\[([^\]]*)\]`)

// scalarBytes are the sizes of element types a shared array may have.
var scalarBytes = map[string]int{
	"float": 4, "int": 4, "unsigned": 4, "uint": 4, "int32_t": 4, "uint32_t": 4,
	"half": 2, "__half": 2, "__nv_bfloat16": 2, "bfloat": 2, "short": 2, "ushort": 2,
	"double": 8, "float2": 8, "int2": 8, "half2": 4, "__half2": 4, "float4": 16, "int4": 16,
	"char": 1, "uchar": 1, "int8_t": 1, "uint8_t": 1, "int64_t": 8, "long": 8,
}

// sharedItems suggests a tgm: item for each static shared array in src:
// its bytes as an expression when the element type and every extent are
// known (a literal, a dim, a knob, T), else a commented TODO line. The
// extern (unsized) arrays, sized at launch, are dynamic: the dispatch's
// dynamic_tgm TODO names them.
func sharedItems(src string, known map[string]bool) (items, dynamic []string) {
	for _, m := range sharedDecl.FindAllStringSubmatch(src, -1) {
		typ, name, ext := m[2], m[3], m[4]
		if m[1] != "" {
			dynamic = append(dynamic, name)
			continue
		}
		var factors []string
		ok := true
		for _, e := range extentRE.FindAllStringSubmatch(ext, -1) {
			x := strings.TrimSpace(e[1])
			if _, err := strconv.Atoi(x); err == nil || known[x] {
				factors = append(factors, x)
			} else {
				ok = false
			}
		}
		size := ""
		switch {
		case typ == "T":
			size = "sizeof(T)"
		case scalarBytes[typ] > 0:
			size = strconv.Itoa(scalarBytes[typ])
		default:
			ok = false
		}
		decl := strings.TrimSpace(m[0])
		if !ok {
			items = append(items, fmt.Sprintf("# - {name: %s, bytes: \"TODO\"}   # TODO: bytes of %s", name, decl))
			continue
		}
		expr := strings.Join(append(factors, size), " * ")
		if n, err := evalProduct(factors, size); err == nil {
			expr = strconv.Itoa(n)
		}
		items = append(items, fmt.Sprintf("- {name: %s, bytes: \"%s\"}   # %s", name, expr, decl))
	}
	return items, dynamic
}

// evalProduct multiplies literal factors; an error when one is a name.
func evalProduct(factors []string, size string) (int, error) {
	n, err := strconv.Atoi(size)
	if err != nil {
		return 0, err
	}
	for _, f := range factors {
		v, err := strconv.Atoi(f)
		if err != nil {
			return 0, err
		}
		n *= v
	}
	return n, nil
}
