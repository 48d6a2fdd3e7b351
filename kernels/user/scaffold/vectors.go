package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// vecType is a CUDA or Metal vector or matrix type read from its name
// (float4, half2, uchar4, __half2, float4x4, half3x3): never the element
// type's name, since each lane is its scalar.
type vecType struct {
	scalar  string   // the C type of one lane: float, half, int, …
	extents []string // what the type adds to a buffer's last extents: [4] for a float4, [4, 4] for a float4x4
	what    string   // "float4 has 4 lanes", for the buffer's comment
}

var vectorName = regexp.MustCompile(`^(float|half|bfloat|double|int|uint|short|ushort|char|uchar|long|ulong|longlong|ulonglong)([234])(?:x([234]))?$`)

// vectorScalars are the lane types whose dtype is not the name's own C
// type: a vector of char is of signed char (i8), of longlong of long long.
var vectorScalars = map[string]string{"char": "signed char", "longlong": "long long", "ulonglong": "unsigned long long", "ulong": "unsigned long"}

// vectorType reads t as a vector or matrix type of lang. A 3-lane vector
// takes 4 lanes' room on Metal (as does a matrix's 3-row column); a
// matrix (Metal only) is C columns of R lanes, shape [C, R].
func vectorType(t, lang string) (vecType, bool) {
	switch t {
	case "__half2":
		return vecType{scalar: "__half", extents: []string{"2"}, what: "__half2 has 2 lanes"}, true
	case "__nv_bfloat162":
		return vecType{scalar: "__nv_bfloat16", extents: []string{"2"}, what: "__nv_bfloat162 has 2 lanes"}, true
	}
	m := vectorName.FindStringSubmatch(t)
	if m == nil || (m[3] != "" && lang != "metal") {
		return vecType{}, false
	}
	scalar := m[1]
	if s, ok := vectorScalars[scalar]; ok {
		scalar = s
	}
	if cTypes[scalar] == "" {
		return vecType{}, false
	}
	room := func(n string) string {
		if n == "3" && lang == "metal" {
			return "4"
		}
		return n
	}
	if m[3] == "" {
		v := vecType{scalar: scalar, extents: []string{room(m[2])}, what: fmt.Sprintf("%s has %s lanes", t, m[2])}
		if room(m[2]) != m[2] {
			v.what += " in 4 lanes' room"
		}
		return v, true
	}
	v := vecType{scalar: scalar, extents: []string{m[2], room(m[3])}, what: fmt.Sprintf("%s is %s columns of %s lanes", t, m[2], m[3])}
	if room(m[3]) != m[3] {
		v.what += " (each in 4 lanes' room)"
	}
	return v, true
}

// pointeeVector reads a pointer's pointee (const dropped, a typedef
// followed) as a vector or matrix type.
func (c *context) pointeeVector(t string) (vecType, bool) {
	t = strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
	if u, ok := c.typedefs[t]; ok && u != "" {
		t = u
	}
	return vectorType(t, c.lang)
}

// pointeeStruct is a source struct of one scalar type read as a buffer's
// lanes (mini-nbody's `typedef struct { float x, y, z, vx, vy, vz; } Body;`
// behind `Body* p`: f32 with a last extent of 6): its scalar, its field
// count as the last extent. False for a struct of mixed or unknown types.
func (c *context) pointeeStruct(t string) (vecType, bool) {
	t = strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
	fs := c.scalarStruct(t)
	if len(fs) == 0 {
		return vecType{}, false
	}
	names := make([]string, len(fs))
	for i, f := range fs {
		if f.Type != fs[0].Type {
			return vecType{}, false
		}
		names[i] = f.Name
	}
	scalar := c.resolve(fs[0].Type)
	if cTypes[scalar] == "" {
		return vecType{}, false
	}
	return vecType{scalar: scalar, extents: []string{strconv.Itoa(len(fs))},
		what: fmt.Sprintf("%s is %d %ss (%s)", t, len(fs), scalar, strings.Join(names, ", "))}, true
}

// vectorArg is the arg of a CUDA vector type taken by value (uint3,
// float4, dim3, __half2: a struct of x, y, z, w, laid out by the loader)
// as a mapping of its fields, each 0.
func (c *context) vectorArg(t string) (string, bool) {
	if c.lang != "cuda" {
		return "", false
	}
	n := 3
	if r := c.resolve(t); r != "dim3" {
		v, ok := c.pointeeVector(r)
		if !ok || len(v.extents) != 1 {
			return "", false
		}
		if _, err := fmt.Sscan(v.extents[0], &n); err != nil {
			return "", false
		}
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = "xyzw"[i:i+1] + ": 0"
	}
	return "{" + strings.Join(parts, ", ") + "}", true
}
