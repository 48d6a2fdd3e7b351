package metal

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// MLXKernel is a kernel given the way mx.fast.metal_kernel takes one: a
// name, input and output names, the body of the function only, an
// optional header, and the template arguments of the call.
type MLXKernel struct {
	Name     string
	Inputs   []MLXArg
	Outputs  []MLXArg
	Template []TemplateArg
	Header   string // pasted before the kernel (helpers, #includes)
	Body     string
	// EnsureRowContiguous is MLX's ensure_row_contiguous: inputs are
	// copied to row-contiguous before the call. It changes what the caller
	// does, not the source; it is here so a manifest can carry it.
	EnsureRowContiguous bool
}

// MLXArg is one input or output: its name and element type ("T", a
// template parameter, or "float", "int", …). Scalar marks a 0-d input,
// which MLX binds as `const constant T& name` instead of a pointer.
type MLXArg struct {
	Name   string
	Type   string
	Scalar bool
}

// TemplateArg is one template argument of the call: ("T", "float"),
// ("N", "4"), ("causal", "true").
type TemplateArg struct {
	Name  string
	Value string
}

// MLXAttributes are the thread-position attributes a body may use by
// name, with the types MLX gives them; a body's parameter list gets
// those it uses, in this order.
var MLXAttributes = [][2]string{
	{"dispatch_quadgroups_per_threadgroup", "uint"},
	{"dispatch_simdgroups_per_threadgroup", "uint"},
	{"dispatch_threads_per_threadgroup", "uint3"},
	{"grid_origin", "uint3"},
	{"grid_size", "uint3"},
	{"quadgroup_index_in_threadgroup", "uint"},
	{"quadgroups_per_threadgroup", "uint"},
	{"simdgroup_index_in_threadgroup", "uint"},
	{"simdgroups_per_threadgroup", "uint"},
	{"thread_execution_width", "uint"},
	{"thread_index_in_quadgroup", "uint"},
	{"thread_index_in_simdgroup", "uint"},
	{"thread_index_in_threadgroup", "uint"},
	{"thread_position_in_grid", "uint3"},
	{"thread_position_in_threadgroup", "uint3"},
	{"threadgroup_position_in_grid", "uint3"},
	{"threadgroups_per_grid", "uint3"},
	{"threads_per_grid", "uint3"},
	{"threads_per_simdgroup", "uint"},
	{"threads_per_threadgroup", "uint3"},
}

// MLXTemplateName is the name of the kernel template WriteMLXKernel
// writes for k; the entry (its [[host_name]]) is k.Name itself.
func MLXTemplateName(name string) string { return "custom_kernel_" + name }

var shapeRef = regexp.MustCompile(`\b([A-Za-z_]\w*?)_(shape|strides|ndim)\b`)

// WriteMLXKernel writes the full MSL source of k as MLX does: inputs
// `const device T* name [[buffer(i)]]`, each followed by name_shape
// (`const constant int*`), name_strides (`const constant int64_t*`) and
// name_ndim (`const constant int&`) when the body uses them, then outputs
// `device T* name`, then the attributes of MLXAttributes the body uses.
// With template arguments the kernel is `template <…>` and instantiated
// under [[host_name(k.Name)]], so the entry is k.Name either way and the
// body sees T and N as template parameters, as in MLX.
func WriteMLXKernel(k MLXKernel) (string, error) {
	if err := checkMLXNames(k); err != nil {
		return "", err
	}
	uses := map[string]bool{}
	for _, w := range identifier.FindAllString(csrc.BlankComments(k.Body), -1) {
		uses[w] = true
	}
	if err := checkShapeRefs(k, uses); err != nil {
		return "", err
	}
	var params []string
	buf := 0
	add := func(decl string) {
		params = append(params, fmt.Sprintf("  %s [[buffer(%d)]]", decl, buf))
		buf++
	}
	for _, in := range k.Inputs {
		if in.Scalar {
			add(fmt.Sprintf("const constant %s& %s", in.Type, in.Name))
			continue
		}
		add(fmt.Sprintf("const device %s* %s", in.Type, in.Name))
		if uses[in.Name+"_shape"] {
			add("const constant int* " + in.Name + "_shape")
		}
		if uses[in.Name+"_strides"] {
			add("const constant int64_t* " + in.Name + "_strides")
		}
		if uses[in.Name+"_ndim"] {
			add("const constant int& " + in.Name + "_ndim")
		}
	}
	for _, out := range k.Outputs {
		add(fmt.Sprintf("device %s* %s", out.Type, out.Name))
	}
	for _, a := range MLXAttributes {
		if uses[a[0]] {
			params = append(params, fmt.Sprintf("  %s %s [[%s]]", a[1], a[0], a[0]))
		}
	}
	var b strings.Builder
	b.WriteString("#include <metal_stdlib>\nusing namespace metal;\n")
	if k.Header != "" {
		b.WriteString(k.Header)
		b.WriteString("\n")
	}
	fn := k.Name
	if len(k.Template) > 0 {
		fn = MLXTemplateName(k.Name)
		b.WriteString(templateHead(k.Template))
	}
	fmt.Fprintf(&b, "[[kernel]] void %s(\n%s) {\n%s\n}\n", fn, strings.Join(params, ",\n"), strings.TrimRight(k.Body, "\n"))
	if len(k.Template) > 0 {
		vals := make([]string, len(k.Template))
		for i, t := range k.Template {
			vals[i] = t.Value
		}
		inst := fn + "<" + strings.Join(vals, ", ") + ">"
		fmt.Fprintf(&b, "template [[host_name(%q)]] [[kernel]] decltype(%s) %s;\n", k.Name, inst, inst)
	}
	return b.String(), nil
}

// templateHead is `template <typename T, int N, bool B>\n`: an integer
// value makes an int parameter, true/false a bool, anything else a type.
func templateHead(ts []TemplateArg) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		kind := "typename"
		if _, err := strconv.Atoi(t.Value); err == nil {
			kind = "int"
		} else if t.Value == "true" || t.Value == "false" {
			kind = "bool"
		}
		parts[i] = kind + " " + t.Name
	}
	return "template <" + strings.Join(parts, ", ") + ">\n"
}

// checkMLXNames wants identifiers, each name once, a type per argument
// and a value per template argument.
func checkMLXNames(k MLXKernel) error {
	if !isIdent(k.Name) {
		return fmt.Errorf("MLX kernel name %q is not an identifier: use letters, digits and _", k.Name)
	}
	if strings.TrimSpace(k.Body) == "" {
		return fmt.Errorf("MLX kernel %s has an empty body: give source (the body of the function)", k.Name)
	}
	seen := map[string]string{}
	note := func(name, what string) error {
		if !isIdent(name) {
			return fmt.Errorf("MLX kernel %s: %s name %q is not an identifier", k.Name, what, name)
		}
		if prev, dup := seen[name]; dup {
			return fmt.Errorf("MLX kernel %s: %q is both a %s and a %s name: rename one", k.Name, name, prev, what)
		}
		seen[name] = what
		return nil
	}
	for _, group := range []struct {
		what string
		args []MLXArg
	}{{"input", k.Inputs}, {"output", k.Outputs}} {
		for _, a := range group.args {
			if err := note(a.Name, group.what); err != nil {
				return err
			}
			if strings.TrimSpace(a.Type) == "" {
				return fmt.Errorf("MLX kernel %s: %s %s has no type: give its element type (\"float\", or a template parameter such as \"T\")", k.Name, group.what, a.Name)
			}
			if a.Scalar && group.what == "output" {
				return fmt.Errorf("MLX kernel %s: output %s is marked scalar: outputs are always device pointers", k.Name, a.Name)
			}
		}
	}
	for _, t := range k.Template {
		if err := note(t.Name, "template"); err != nil {
			return err
		}
		if strings.TrimSpace(t.Value) == "" {
			return fmt.Errorf("MLX kernel %s: template argument %s has no value (a type such as float, an integer or true/false)", k.Name, t.Name)
		}
	}
	return nil
}

// checkShapeRefs rejects name_shape / name_strides / name_ndim in the body
// for a name that is not an array input: MLX would leave it undeclared and
// the Metal compiler's error would not say why.
func checkShapeRefs(k MLXKernel, uses map[string]bool) error {
	arrays := map[string]bool{}
	var names []string
	for _, in := range k.Inputs {
		if !in.Scalar {
			arrays[in.Name] = true
			names = append(names, in.Name)
		}
	}
	var bad []string
	for w := range uses {
		m := shapeRef.FindStringSubmatch(w)
		if m == nil || m[0] != w || arrays[m[1]] {
			continue
		}
		bad = append(bad, w)
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("MLX kernel %s: the body uses %s, but %q is not an array input (inputs with shapes: %s; outputs and scalar inputs have no shape, strides or ndim)",
		k.Name, strings.Join(bad, ", "), shapeRef.FindStringSubmatch(bad[0])[1], strings.Join(names, ", "))
}
