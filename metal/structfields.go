package metal

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/profiler"
)

// StructField is one field of a struct a kernel takes its scalars in
// (`constant Args& args [[buffer(0)]]`): Count is 1, or N for `T f[N]`.
type StructField struct {
	Name  string
	Type  string // as declared: "int32_t", "uint64_t", "float"
	Kind  profiler.ScalarKind
	Count int
}

var structField = regexp.MustCompile(`^([A-Za-z_][\w:]*(?:\s+[A-Za-z_][\w:]*)*?)\s+([A-Za-z_]\w*)\s*(?:\[\s*(\w+)\s*\])?$`)

// StructFields reads the fields of the struct type name in src, defined as
// `typedef struct { … } name;` or `struct name { … };`. found is false when
// src defines no such struct; a field that is not a scalar or a fixed
// array of scalars is an error naming it (mltop packs scalars only).
func StructFields(src, name string) (fields []StructField, found bool, err error) {
	text := expandMacros(src)
	q := regexp.QuoteMeta(name)
	var body string
	if m := regexp.MustCompile(`\bstruct\s+` + q + `\s*\{([^{}]*)\}`).FindStringSubmatch(text); m != nil {
		body = m[1]
	} else if m := regexp.MustCompile(`\btypedef\s+struct\s*\w*\s*\{([^{}]*)\}\s*` + q + `\s*;`).FindStringSubmatch(text); m != nil {
		body = m[1]
	} else {
		return nil, false, nil
	}
	for _, decl := range strings.Split(body, ";") {
		decl = strings.Join(strings.Fields(decl), " ")
		if decl == "" {
			continue
		}
		m := structField.FindStringSubmatch(decl)
		if m == nil {
			return nil, true, fmt.Errorf("struct %s: cannot read the field `%s`: mltop fills structs of scalar fields and fixed arrays of them, one declaration per field", name, decl)
		}
		typ := strings.TrimPrefix(strings.TrimPrefix(m[1], "const "), "metal::")
		kind, ok := metalScalarKinds[typ]
		if !ok {
			return nil, true, fmt.Errorf("struct %s: field %s has type %s: mltop fills struct fields of the scalar types (int32_t, uint64_t, float, …) and fixed arrays of them", name, m[2], typ)
		}
		f := StructField{Name: m[2], Type: typ, Kind: kind, Count: 1}
		if m[3] != "" {
			n, err := strconv.Atoi(m[3])
			if err != nil || n < 1 {
				return nil, true, fmt.Errorf("struct %s: field %s[%s]: mltop needs the array's length as a number", name, m[2], m[3])
			}
			f.Count = n
		}
		fields = append(fields, f)
	}
	return fields, true, nil
}
