package scaffold

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
)

// context is what the scaffold knows of the whole source.
type context struct {
	src, lang string
	// entries are the names the request gave (--entry), a Metal
	// [[host_name]] among them choosing its instance (hostNameTemplates)
	entries   []string
	toks      []csrc.Token
	typedefs  map[string]string
	consts    []constant
	dtypeName string
	// dtypeNameWhy is the dtype_name line's comment: why the element
	// type has that name
	dtypeNameWhy string
	intNames     map[string]bool // every integer parameter name of the chosen kernels
	usesDType    bool            // a buffer or scalar follows the spec's dtype
	// dtypeParam: dtypeName is a type parameter of a chosen kernel's
	// template, which mltop binds per dtype: a typedef of that name
	// elsewhere in the source (a class's member `typedef float Real;`, one
	// per branch of an #if) is not its type
	dtypeParam bool
	// scalarStructs memoizes scalarStruct (a struct name is asked of
	// every pointer parameter)
	scalarStructs map[string][]csrc.StructField
	// metalStructs memoizes metalStruct.
	metalStructs map[string][]metal.StructField
	// launchTArgs are the template arguments the host launches pass, by
	// kernel (sigKey)
	launchTArgs map[string]*launchTemplate
}

// cTypes are element types the scaffold maps to a fixed dtype; vector
// and matrix types (float4, half2, float4x4) are their lanes' (vectorType).
var cTypes = map[string]string{
	"float": "f32", "double": "f64",
	"__nv_fp8_e4m3": "fp8e4m3", "__nv_fp8x2_e4m3": "fp8e4m3", "__nv_fp8x4_e4m3": "fp8e4m3",
	"__nv_fp8_e5m2": "fp8e5m2", "__nv_fp8x2_e5m2": "fp8e5m2", "__nv_fp8x4_e5m2": "fp8e5m2",
	"signed char": "i8", "int8_t": "i8",
	"unsigned char": "u8", "uint8_t": "u8", "uchar": "u8", "__nv_fp8_storage_t": "u8",
	"short": "i16", "int16_t": "i16", "unsigned short": "u16", "uint16_t": "u16", "ushort": "u16",
	"half": "f16", "__half": "f16", "float16_t": "f16", "_Float16": "f16",
	"__nv_bfloat16": "bf16", "nv_bfloat16": "bf16", "bfloat": "bf16", "bfloat16_t": "bf16",
	"int": "i32", "int32_t": "i32", "unsigned": "u32", "unsigned int": "u32", "uint": "u32", "uint32_t": "u32",
	"long": "i64", "long int": "i64", "long long": "i64", "long long int": "i64", "int64_t": "i64", "ptrdiff_t": "i64",
	"unsigned long": "u64", "unsigned long long": "u64", "uint64_t": "u64", "size_t": "u64", "ulong": "u64",
}

// nonFloat are C types that are no element type's name.
var nonFloat = map[string]bool{"void": true, "bool": true, "char": true, "signed char": true, "int8_t": true, "uint8_t": true, "uchar": true,
	"short": true, "int16_t": true, "uint16_t": true, "ushort": true, "long": true, "long long": true, "int64_t": true, "uint64_t": true, "size_t": true}

func newContext(src, lang string, sigs []csrc.Signature, entries ...string) *context {
	c := &context{src: src, lang: lang, entries: entries, toks: csrc.Tokenize(src), typedefs: csrc.Typedefs(src), consts: blockConstants(src), intNames: map[string]bool{},
		scalarStructs: map[string][]csrc.StructField{}, metalStructs: map[string][]metal.StructField{}}
	c.readLaunchTemplates(sigs)
	for _, s := range sigs {
		for _, p := range s.Bindable() {
			if !p.Pointer && c.intType(p.Scalar) {
				c.intNames[p.Name] = true
			}
		}
	}
	c.dtypeName = c.chooseDType(sigs)
	return c
}

// chooseDType names the element type: the source's own floatX-style name
// (a typedef, or a name it uses but leaves to mltop), else a template's
// type parameter, else T; floatX when T is a parameter (llm.c's int T).
func (c *context) chooseDType(sigs []csrc.Signature) string {
	intT := c.intNames["T"]
	var own, tmpl string
	for _, s := range sigs {
		for _, p := range s.Bindable() {
			t := strings.TrimSpace(strings.ReplaceAll(p.Pointee, "const", ""))
			if _, isVector := c.pointeeVector(t); p.Pointer && own == "" && t != "" && cTypes[t] == "" && !isVector && !s.IsTemplateParam(t) && c.floatAlias(t) {
				own = t
			}
		}
		if tmpl == "" {
			tps := templateOf(c.toks, entryAt(c.toks, s))
			floats := scalarOnlyTypes(s, tps)
			for _, tp := range tps {
				if tp.isType && !tp.pack && floats[tp.name] == nil && c.launchFixed(s, tp.name) == "" {
					tmpl = tp.name
					break
				}
			}
		}
	}
	switch {
	case own != "" && !(own == "T" && intT):
		c.dtypeNameWhy = "the element type's name in the source; buffers say dtype: " + own
		if t, ok := c.typedefs[own]; ok {
			c.dtypeNameWhy = fmt.Sprintf("the source's typedef (%s) names the element type; buffers say dtype: %s", orConditional(t), own)
		}
		return own
	case tmpl != "" && tmpl != "T":
		c.dtypeParam = true
		return tmpl
	case intT:
		c.dtypeNameWhy = "a kernel takes int T: the element type is named floatX so that T can be a dim; buffers say dtype: floatX"
		return "floatX"
	}
	c.dtypeParam = tmpl == "T"
	return "T"
}

func orConditional(t string) string {
	if t == "" {
		return "chosen by an #if"
	}
	return "of " + t
}

// floatAlias says whether a pointee name stands for a float element type:
// a typedef of one (or one an #if chooses), or a name the source uses
// without declaring it (mltop declares it).
func (c *context) floatAlias(t string) bool {
	if c.intType(t) || nonFloat[t] {
		return false
	}
	if u, ok := c.typedefs[t]; ok {
		return u == "" || isSpecDType(cTypes[u])
	}
	if c.scalarStruct(t) != nil || c.metalStruct(t) != nil || strings.ContainsAny(t, " <:") {
		return false
	}
	return true
}

func (c *context) intType(t string) bool {
	t = strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
	if u, ok := c.typedefs[t]; ok && u != "" {
		t = u
	}
	return csrc.IsIntScalar(t) || isIntDType(cTypes[t])
}

// generic says whether a type follows the spec's dtype.
func (c *context) generic(t string, sig csrc.Signature) bool {
	t = strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
	if t == c.dtypeName || sig.IsTemplateParam(t) || t == "void" {
		return true
	}
	u, ok := c.typedefs[t]
	return ok && u == ""
}

// elemDType is a buffer's dtype from its pointee.
func (c *context) elemDType(t string, sig csrc.Signature) string {
	t = strings.TrimSpace(strings.ReplaceAll(t, "const", ""))
	if c.generic(t, sig) {
		c.usesDType = true
		return c.dtypeName
	}
	if u, ok := c.typedefs[t]; ok && cTypes[u] != "" {
		if t == c.dtypeName {
			return c.dtypeName
		}
		t = u
	}
	if v, ok := vectorType(t, c.lang); ok {
		t = v.scalar
	} else if v, ok := c.pointeeStruct(t); ok {
		t = v.scalar
	}
	if d := cTypes[t]; d != "" {
		return d
	}
	if t == "char" {
		// a plain char* views bytes (MLX's rbitsc writes its random bits
		// through device char*): a u8 buffer, not the dtype
		return "u8"
	}
	c.usesDType = true
	return c.dtypeName
}

// setDTypes writes the dtypes the buffers' types allow.
func (c *context) setDTypes(p *plan) {
	if u, ok := c.typedefs[c.dtypeName]; ok && !c.dtypeParam {
		switch d := cTypes[u]; {
		case u == "" && c.pickedDType(p):
		case u == "":
			p.dtypes = "[f32]"
			p.dtypesNote = p.todo(fmt.Sprintf("an #if in the source chooses %s's type: list the dtype it picks (mltop does not declare %s, the source does)", c.dtypeName, c.dtypeName),
				"%s's type is chosen by an #if in the source: dtypes lists f32; set it to what the source picks", c.dtypeName)
		case isSpecDType(d):
			p.dtypes = "[" + d + "]"
			p.dtypesNote = fmt.Sprintf("the source's typedef fixes %s as %s", c.dtypeName, u)
		}
		return
	}
	if c.usesDType {
		p.dtypes = "[f32, f16, bf16]"
		p.dtypesNote = fmt.Sprintf("TODO: mltop declares %s per dtype; drop the dtypes the kernel cannot take", c.dtypeName)
		return
	}
	p.dtypes = "[" + fixedDType(p) + "]"
	if p.dtypesNote == "" {
		p.dtypesNote = "the buffers' types are fixed in the source"
	}
}

// fixedDType is the dtype of a kernel whose buffers' types are all fixed
// in the source: the one float type its buffers have (half: f16, bfloat:
// bf16), f32 when they have none. Where they mix float types, it is the
// type of the data the kernel reads (half in, float out: an f16 kernel),
// the narrowest of them where the inputs mix too, and a TODO says so.
func fixedDType(p *plan) string {
	var ins, outs, all []string
	names := map[string][]string{}
	for _, b := range p.bufs {
		if !isSpecDType(b.dtype) || b.symbol != "" {
			continue
		}
		if b.role == "" {
			ins = appendNew(ins, b.dtype)
		} else {
			outs = appendNew(outs, b.dtype)
		}
		all = appendNew(all, b.dtype)
		names[b.dtype] = append(names[b.dtype], b.name)
	}
	switch len(all) {
	case 0:
		return "f32"
	case 1:
		return all[0]
	}
	from, what := ins, "the data it reads"
	if len(ins) == 0 {
		from, what = outs, "its outputs"
	}
	d := from[0]
	for _, x := range from {
		if d == "f32" && x != "f32" {
			d = x // the narrowest: an f16 kernel that reads an f32 scale is an f16 kernel
		}
	}
	if len(from) > 1 {
		what = "the narrowest of " + what
	}
	var mix []string
	for _, x := range all {
		mix = append(mix, fmt.Sprintf("%s (%s)", x, strings.Join(names[x], ", ")))
	}
	p.dtypesNote = p.todo(fmt.Sprintf("the buffers mix %s: dtypes lists %s, the type of %s; it names the rows and is the reference's dims[\"dtype\"], and each output is checked at its own dtype's tolerance (give an output `tol:` where the kernel computes it in a narrower type)",
		strings.Join(mix, " and "), d, what),
		"the buffers mix %s: dtypes lists %s, the type of %s; set the one the kernel is in", strings.Join(mix, " and "), d, what)
	return d
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// pickedDType sets the dtypes when the source's #if picks the dtype
// name's type: fixed when the source #defines a macro the #if tests
// (llm.c's `#define ENABLE_BF16` before `#include "common.h"`), else the
// default branch's type, with a TODO naming the macros that choose others.
func (c *context) pickedDType(p *plan) bool {
	ch, ok := chooseTypedef(c.src, c.dtypeName)
	d := cTypes[ch.ctype]
	if !ok || !isSpecDType(d) {
		return false
	}
	p.dtypes = "[" + d + "]"
	if len(ch.fixed) > 0 {
		p.dtypesNote = fmt.Sprintf("the source defines %s, so its #if makes %s %s", strings.Join(ch.fixed, ", "), c.dtypeName, ch.ctype)
		return true
	}
	if hint := fixedTypeHint(ch, c.dtypeName); hint != "" {
		p.dtypesNote = p.todo(hint, "%s's type is chosen by an #if on %s: dtypes lists %s, the type it picks by default", c.dtypeName, strings.Join(ch.tested, ", "), d)
		return true
	}
	p.dtypesNote = p.todo(fmt.Sprintf("without %s the source's #if makes %s %s; to run others, list them and set defines: (e.g. {%s: \"%s == bf16\"})", strings.Join(ch.tested, " or "), c.dtypeName, ch.ctype, firstOr(ch.tested, "MACRO"), c.dtypeName),
		"%s's type is chosen by an #if on %s: dtypes lists %s, the type it picks by default", c.dtypeName, strings.Join(ch.tested, ", "), d)
	return true
}

// fixedTypeHint says how to run the type an #if branch not taken picks
// when that type is no dtype mltop declares per spec (`#ifdef USE_DP
// typedef double real;`): define the branch's macro and give the buffers
// that type's dtype; "" when no branch picks such a type.
func fixedTypeHint(ch typedefChoice, name string) string {
	var ways []string
	for _, o := range ch.others {
		d := cTypes[o.ctype]
		if d == "" || isSpecDType(d) || len(o.tested) == 0 {
			continue
		}
		macro := o.tested[len(o.tested)-1]
		ways = append(ways, fmt.Sprintf("for %s, set defines: {%s: 1} and give the buffers dtype: %s in place of %s", o.ctype, macro, d, name))
	}
	if len(ways) == 0 {
		return ""
	}
	return fmt.Sprintf("without %s the source's #if makes %s %s; %s", strings.Join(ch.tested, " or "), name, ch.ctype, strings.Join(ways, "; "))
}

func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
