package scaffold

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/mltop/mltop/kernels/user"
	"github.com/mltop/mltop/kernels/user/csrc"
	"github.com/mltop/mltop/metal"
	"github.com/mltop/mltop/profiler"
)

// bindParams maps each parameter the caller binds to an arg: pointers to
// buffers, integers to dims (or a block-size knob), floats to values,
// bools to flags. Args follow the parameters' order, as mltop numbers a
// Metal kernel's unmarked parameters in order too; only a Metal kernel
// taking a parameter struct gets its buffers first, then the struct's
// fields, since mltop packs those into the one struct.
func (c *context) bindParams(p *plan, k *kernelScan) []string {
	var inOrder, buffers, metalScalars []string
	takesStruct := c.lang == "metal" && metalTakesStruct(c, k)
	lay := c.stridedLayout(p, k)
	if lay != nil {
		k.argsNotes = append(k.argsNotes, lay.notes...)
	}
	for i, prm := range c.withPack(p, k) {
		pname := prm.Name
		if pname == "" {
			pname = fmt.Sprintf("arg%d", i)
		}
		if a, ok := lay.arg(prm.Name); ok { // a shape or stride array, its rank or element count
			inOrder = append(inOrder, a)
			continue
		}
		var bound []string
		accElem, accRank, accessor := user.PackedAccessor(prm)
		switch {
		case prm.Pointer && strings.Contains(prm.Type, "constant") && !strings.Contains(prm.Type, "*"):
			bound = c.constantParam(p, k, prm, pname)
			metalScalars = append(metalScalars, bound...)
		case prm.Pointer:
			// a buffer after the struct is fine: mltop pairs the buffers
			// with the buffer parameters in order, wherever the struct sits
			// (ggml's `constant ggml_metal_kargs_cpy & args` comes first)
			bound = []string{c.bufferParam(p, k, prm, pname)}
			buffers = append(buffers, bound...)
		case c.lang == "cuda" && accessor:
			// a PyTorch packed accessor by value: a buffer of its rank
			ptr := prm
			ptr.Pointer, ptr.Pointee, ptr.ReadOnly = true, accElem, prm.Const
			bound = []string{c.bufferParam(p, k, ptr, pname)}
			if b := findBuffer(p, bound[0]); b != nil && b.rank == 0 {
				b.rank = accRank
			}
			buffers = append(buffers, bound...)
		case c.lang == "metal":
			bound = []string{c.scalarParam(p, k, pname, prm.Scalar)}
			metalScalars = append(metalScalars, bound...)
		default:
			bound = []string{c.scalarParam(p, k, pname, prm.Scalar)}
			buffers = append(buffers, bound...)
		}
		inOrder = append(inOrder, bound...)
	}
	if !takesStruct {
		return inOrder
	}
	return append(buffers, metalScalars...)
}

// constantParam maps a Metal `constant X& name` parameter: one scalar, or
// the fields of a struct in order (mltop packs them into one struct).
func (c *context) constantParam(p *plan, k *kernelScan, prm csrc.Param, pname string) []string {
	if fs := c.metalStruct(prm.Pointee); fs != nil && hasArrayField(fs) {
		var out, arrays []string
		for _, f := range fs {
			if f.Count == 1 {
				out = append(out, c.scalarParam(p, k, f.Name, f.Type))
				continue
			}
			out = append(out, "["+strings.Repeat("1, ", f.Count-1)+"1]")
			arrays = append(arrays, fieldDecl(f))
		}
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("the fields of %s (%s), in order, each packed at its declared type; the array fields %s are all 1s: set each element", pname, prm.Pointee, strings.Join(arrays, ", ")),
			"%s: %s (%s) is a struct: its fields %s are the args after the buffers, in order, an array field as an array value of its length (the elements of %s are 1s: set them to what your launch passes)", k.sig.Entry, pname, prm.Pointee, metalFieldNames(fs), strings.Join(arrays, ", ")))
		return out
	}
	if fs := c.scalarStruct(prm.Pointee); fs != nil {
		var out []string
		for _, f := range fs {
			out = append(out, c.scalarParam(p, k, f.Name, f.Type))
		}
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("the fields of %s (%s), in order, each packed at its declared type", pname, prm.Pointee),
			"%s: %s (%s) is a struct: its fields %s are the args after the buffers, in order (mltop packs each at its declared type and offset, wherever the struct sits among the parameters)", k.sig.Entry, pname, prm.Pointee, fieldNames(fs)))
		return out
	}
	// `constant bool& contiguous` (candle's index_select) is a flag
	if cTypes[prm.Pointee] == "" && !c.intType(prm.Pointee) && prm.Pointee != "bool" {
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("add the fields of %s (%s) as the last args, in order", pname, prm.Type),
			"%s: %s (%s): mltop cannot read that type's fields; list them as the last args, in order", k.sig.Entry, pname, prm.Type))
		return nil
	}
	return []string{c.scalarParam(p, k, pname, prm.Pointee)}
}

func fieldNames(fs []csrc.StructField) string {
	var n []string
	for _, f := range fs {
		n = append(n, f.Name)
	}
	return strings.Join(n, ", ")
}

// scalarParam maps a by-value parameter to its arg expression.
func (c *context) scalarParam(p *plan, k *kernelScan, pname, ctype string) string {
	t := strings.TrimSpace(strings.ReplaceAll(ctype, "const", ""))
	switch {
	case k.floatTypes[t] != nil:
		return c.value(p, pname, t+" is float in the entry: only by-value parameters take it")
	case c.generic(t, k.sig) || t == "float" || t == "double" || halfScalar[t]:
		if c.generic(t, k.sig) {
			c.usesDType = true
		}
		if halfScalar[t] {
			return c.halfValue(p, pname, t)
		}
		return c.value(p, pname, "")
	case t == "bool":
		n, isNew := p.claim(safeName(pname, c.dtypeName), "flag")
		if isNew {
			p.flags = append(p.flags, part{name: n, body: "{default: false}", comment: "TODO: the default of parameter " + pname})
		}
		return n
	case c.intType(t):
		return c.intParam(p, k, pname, t)
	}
	if m, ok := c.vectorArg(t); ok {
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("%s is %s taken by value: set its fields to what the kernel gets", pname, t),
			"%s: %s is CUDA vector type %s taken by value: its fields are 0 (%s): set them to what the kernel gets", k.sig.Entry, pname, t, m))
		return m
	}
	if c.lang == "cuda" {
		if d, found, _ := csrc.FindStruct(c.src, templateName(c.resolve(t))); found {
			if len(d.Members) == 0 && d.Base == "" { // an empty functor: nothing to lay out
				return "{}"
			}
			m, err := c.structMapping(p, k, pname, t)
			if err == nil {
				return m
			}
			return c.structArg(p, k, pname, t, d.Members, err)
		}
	}
	k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("the arg of %s (%s, which mltop cannot pass) is 0", pname, t),
		"%s: parameter %s has type %s, which mltop cannot pass: its arg is 0; change the parameter or the args", k.sig.Entry, pname, t))
	return "0"
}

var halfScalar = map[string]bool{"half": true, "__half": true, "__nv_bfloat16": true, "bfloat": true, "nv_bfloat16": true}

// intParam maps an integer parameter: a block-size knob, B * T for an N
// that the other kernels split into B and T, or a dim.
func (c *context) intParam(p *plan, k *kernelScan, pname, ctype string) string {
	arg := c.intArg(p, k, pname)
	c.fitDim(p, arg, pname, ctype)
	if vocabLike.MatchString(pname) && nameRE.MatchString(arg) {
		k.vocab = arg
	}
	return arg
}

var nameRE = regexp.MustCompile(`^[A-Za-z_]\w*$`)

// narrowInts are the largest values of the integer types narrower than
// 32 bits (char is signed, as the loader takes it).
var narrowInts = map[string]int{"char": 127, "signed char": 127, "int8_t": 127, "unsigned char": 255, "uint8_t": 255, "uchar": 255,
	"short": 32767, "short int": 32767, "signed short": 32767, "int16_t": 32767,
	"unsigned short": 65535, "unsigned short int": 65535, "uint16_t": 65535, "ushort": 65535}

// fitDim keeps the dim a parameter (or struct field) of a narrow integer
// type is bound to within that type: its guessed default the largest
// power of two that fits (1048576 does not fit a char: the default spec
// would not plan), and a max of the type's largest value.
func (c *context) fitDim(p *plan, dim, pname, ctype string) {
	top, narrow := narrowInts[strings.Join(strings.Fields(c.resolve(ctype)), " ")]
	if !narrow || p.taken[dim] != "dim" {
		return
	}
	for i := range p.dims {
		d := &p.dims[i]
		if d.name != dim || strings.Contains(d.body, "max:") {
			continue
		}
		v := defaultOf(p, dim)
		for v > top {
			v /= 2
		}
		if v < 1 {
			v = 1
		}
		d.body = fmt.Sprintf("{default: %d, min: 1, max: %d}", v, top)
		d.comment += fmt.Sprintf("; at most %d: %s is %s", top, pname, strings.Join(strings.Fields(c.resolve(ctype)), " "))
	}
}

// intArg is intParam's arg expression.
func (c *context) intArg(p *plan, k *kernelScan, pname string) string {
	if lb, ok := k.loopBounds[pname]; ok {
		return c.boundDim(p, k, lb)
	}
	if blockLike.MatchString(pname) && blockIsParam(k, pname) {
		k.block = c.blockKnob(p, pname, "", "parameter")
		return k.block
	}
	if a := c.notSizeArg(p, k, pname); a != "" {
		return a
	}
	if c.lang == "metal" && strideScalarLike.MatchString(pname) {
		// a stride is no size: as a dim it went into the buffers' shapes
		// and the grid (MLX's rms_norm: shape [axis_size, w_stride])
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("%s is a stride: 1 (contiguous) is a guess", pname),
			"%s: %s is taken as a stride, 1 (contiguous, in elements), not a size: set the stride your launch passes (and the buffers' shapes to what it then reads)", k.sig.Entry, pname))
		return "1"
	}
	if rowsLike.MatchString(pname) && c.intNames["B"] && c.intNames["T"] && !hasParam(k.sig, "B") && !hasParam(k.sig, "T") {
		c.dim(p, k, "B", 2)
		c.dim(p, k, "T", 2)
		k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("%s guessed to be B * T", pname),
			"%s: %s is guessed to be B * T (the other kernels take B and T): check the args", k.sig.Entry, pname))
		return "B * T"
	}
	ints := 0
	for _, q := range k.sig.Bindable() {
		if !q.Pointer && c.intType(q.Scalar) {
			ints++
		}
	}
	return c.dim(p, k, safeName(pname, c.dtypeName), ints)
}

var rowsLike = regexp.MustCompile(`^(N|BT|rows|num_rows)$`)

// strideScalarLike names a scalar stride (MLX's `constant uint& w_stride`,
// candle's conv `stride`, `row_stride`, `stride_x`, and its pool2d's
// short `w_s`, `h_s`, copy2d's `src_s`), as strideArrayLike names an array
// of them.
var strideScalarLike = regexp.MustCompile(`(?i)^(\w+_)?stride(_\w+)?$|^[a-z][a-z0-9]*_s$`)

func hasParam(sig csrc.Signature, name string) bool {
	for _, q := range sig.Params {
		if q.Name == name {
			return true
		}
	}
	return false
}

// dimDefaults are defaults for the names training code gives its sizes.
var dimDefaults = map[string]int{"B": 4, "T": 256, "C": 768, "OC": 768, "NH": 12, "HS": 64, "V": 8192, "Vp": 8192}

// dim adds (once) a dim and records it as one of the kernel's sizes.
func (c *context) dim(p *plan, k *kernelScan, name string, ints int) string {
	n, isNew := p.claim(name, "dim")
	if isNew {
		v, ok := dimDefaults[n]
		switch {
		case ok:
		case ints == 1:
			v = 1048576
		default:
			v = 1024
		}
		p.dims = append(p.dims, part{name: n, body: fmt.Sprintf("{default: %d, min: 1}", v), comment: "TODO: default and range"})
	}
	for _, d := range k.sizeDims {
		if d == n {
			return n
		}
	}
	k.sizeDims = append(k.sizeDims, n)
	return n
}

// valueGuesses are defaults for the names float parameters usually have.
var valueGuesses = map[string]string{"eps": "1e-5", "epsilon": "1e-5", "scale": "1.0", "alpha": "1.0", "beta": "0.0",
	"lr": "1e-3", "learning_rate": "1e-3", "beta1": "0.9", "beta2": "0.999", "weight_decay": "0.0", "momentum": "0.9",
	"grad_scale": "1.0", "temperature": "1.0", "dropout": "0.0", "p": "0.5"}

// value adds (once) a float value with a guessed default; why, when not
// "", says why the parameter is a float (a template type parameter float
// in the entry).
func (c *context) value(p *plan, pname, why string) string {
	n, isNew := p.claim(safeName(pname, c.dtypeName), "value")
	if isNew {
		v, ok := valueGuesses[strings.ToLower(pname)]
		if !ok {
			v = "1.0"
		}
		short, what := "the value the kernel gets for "+pname, "float parameter "+pname
		if why != "" {
			short += " (" + why + ")"
			what += " (" + why + ")"
		}
		comment := p.todo(short, "%s is value %s = %s: set the value you run with", what, n, v)
		p.values = append(p.values, part{name: n, body: v, comment: comment})
	}
	return n
}

// halfValue is value for a 16-bit float parameter, whose TODO says the
// kernel gets the value rounded to that type.
func (c *context) halfValue(p *plan, pname, ctype string) string {
	n, isNew := p.claim(safeName(pname, c.dtypeName), "value")
	if isNew {
		comment := p.todo(fmt.Sprintf("the value the kernel gets for %s (passed as %s, rounded to nearest even)", pname, ctype),
			"%s parameter %s is value %s = 1.0: set the value you run with (the kernel gets it rounded to %s)", ctype, pname, n, ctype)
		p.values = append(p.values, part{name: n, body: "1.0", comment: comment})
	}
	return n
}

// structArg is the arg of a CUDA struct taken by value whose definition
// structMapping cannot read: `new` does not fill its fields, so the arg is a TODO (the manifest does not load until
// it is a mapping of the fields), and ensureOutput names the struct when
// it holds the only pointers.
func (c *context) structArg(p *plan, k *kernelScan, pname, ctype string, fields []string, why error) string {
	shown := fields
	if len(shown) > 3 {
		shown = shown[:3]
	}
	mapping := "{" + strings.Join(shown, ": …, ") + ": …}"
	if len(shown) == 0 {
		mapping = "{field: …}"
	}
	p.structParams = append(p.structParams, fmt.Sprintf("%s takes struct %s %s by value (fields %s), which mltop new cannot read (%v)", k.sig.Entry, ctype, pname, strings.Join(fields, ", "), why))
	k.argsTODOs = append(k.argsTODOs, p.todo(fmt.Sprintf("%s is struct %s taken by value: replace this 0 with a mapping of its fields, %s", pname, ctype, mapping),
		"%s: %s is struct %s taken by value: mltop new cannot read its fields (%v); give the arg as a mapping, %s (fields %s): the manifest does not load until then", k.sig.Entry, pname, ctype, why, mapping, strings.Join(fields, ", ")))
	return "0"
}

// bufferParam maps a pointer parameter to a buffer: const → input; an
// integer ticket counter → scratch (ticket.go); written (and not read) in
// the body → output; read and written → inout.
func (c *context) bufferParam(p *plan, k *kernelScan, prm csrc.Param, pname string) string {
	dt := c.elemDType(prm.Pointee, k.sig)
	if strings.TrimSpace(strings.ReplaceAll(prm.Pointee, "const", "")) == "char" {
		if cast := c.charCast(k, pname); cast != "" {
			dt = cast
		}
	}
	b := &buffer{dtype: dt, readOnlyUse: prm.ReadOnly}
	if v, ok := c.pointeeVector(prm.Pointee); ok {
		b.lanes, b.lanesWhat = v.extents, v.what
		if c.lang == "cuda" && user.WordPointee(c.resolve(strings.TrimSpace(strings.ReplaceAll(prm.Pointee, "const", "")))) {
			b.lanesWhat += " (any dtype fits too, read as whole words: e.g. f16 [rows, cols] for halves the kernel loads 8 at a time)"
		}
	} else if v, ok := c.pointeeStruct(prm.Pointee); ok {
		b.lanes, b.lanesWhat = v.extents, v.what
	}
	var guess func() string // how mltop read the buffer's use, when a guess: its TODO and note
	switch a := accessOf(k.body, pname); {
	case prm.ReadOnly:
		b.init = inputInit(p, dt)
	case isIntDType(dt) && ticketCounter(k.body, pname):
		b.role, b.shape = "scratch", []string{"1"}
		guess = func() string {
			return p.todo("a ticket counter (atomics decide the last block): scratch, reset to 0 before every launch, never compared; give it one element per counter",
				"%s: %s is a ticket counter (an atomic on it decides the last block against gridDim): guessed scratch: true with one element (zeros before every launch, never compared)", k.sig.Entry, pname)
		}
	case a.reads && a.writes:
		b.role, b.init = "inout", inputInit(p, dt)
		guess = func() string {
			return p.todo("read and written by "+k.sig.Entry+": updated in place (inout); make it out if it is only written",
				"%s: %s is read and written: guessed inout (initial values in, final values checked); make it out if it is only written", k.sig.Entry, pname)
		}
	case a.writes:
		b.role = "out"
	case a.reads && !a.escapes:
		b.init = inputInit(p, dt)
		guess = func() string {
			return p.todo("not const but only read by "+k.sig.Entry+": an input", "%s: %s is not const but only read: guessed it is an input", k.sig.Entry, pname)
		}
	default:
		b.role = "out"
		guess = func() string {
			return p.todo("not const, and mltop could not follow its use: guessed an output", "%s: %s is not const and its use could not be followed: guessed it is an output", k.sig.Entry, pname)
		}
	}
	if b.init == inputInit(p, dt) && isIntDType(dt) && dt != "u8" && dt != "i8" && !indexLike.MatchString(pname) && !usedAsIndex(k.body, pname, k.sig) {
		b.init = intDataInit // data, not indices: indexBelowV leaves it
		b.index = "integer data (" + k.sig.Entry + " uses no element as an index): small values"
	}
	if prev := findBuffer(p, pname); prev != nil && prev.dtype == b.dtype && slices.Equal(prev.lanes, b.lanes) && prev.role == b.role && (b.role != "" || prev.init == b.init) {
		prev.readOnlyUse = prev.readOnlyUse || b.readOnlyUse
		return prev.name
	}
	if guess != nil {
		b.how = guess()
	}
	b.name, _ = p.claim(pname, "buffer")
	if b.name != pname {
		b.how = strings.TrimSpace(b.how + fmt.Sprintf(" (parameter %s of %s; the name was taken)", pname, k.sig.Entry))
	}
	p.bufs = append(p.bufs, b)
	k.newBufs = append(k.newBufs, b)
	if isIntDType(dt) && b.role == "" && indexLike.MatchString(pname) {
		k.indexBufs = append(k.indexBufs, b)
	}
	return b.name
}

// vocabLike are names of the size an index buffer indexes below: a
// vocabulary, a number of classes or of embeddings.
var vocabLike = regexp.MustCompile(`^(V|Vp|vocab|vocab_size|n_vocab|num_classes|n_classes|num_embeddings|n_embd_rows)$`)

// indexLike are names of integer inputs that hold indices (token ids,
// targets, labels).
var indexLike = regexp.MustCompile(`(?i)^(inp|input|inputs|tokens?|targets?|labels?|ids?|idx|indices|index|\w+_(ids?|idx|indices|tokens?|targets?|labels?))$`)

// boundIndices makes the kernel's index inputs index below its
// vocabulary-size parameter (randint(0, V)), evaluated per spec.
func boundIndices(k *kernelScan) {
	if k.vocab == "" {
		return
	}
	for _, b := range k.indexBufs {
		if b.init == inputInit(nil, b.dtype) {
			b.init = fmt.Sprintf("randint(0, %s)", k.vocab)
			b.index = fmt.Sprintf("indices below %s, %s's vocabulary size", k.vocab, k.sig.Entry)
		}
	}
}

// isIntDType says whether a scaffold dtype is an integer one.
func isIntDType(dt string) bool {
	d, err := profiler.ParseBufferDType(dt)
	return err == nil && d.IsInt()
}

// isSpecDType says whether a scaffold dtype may be a spec's (f32, f16,
// bf16): the others are a buffer's fixed type.
func isSpecDType(dt string) bool {
	_, err := profiler.ParseDType(dt)
	return err == nil
}

func findBuffer(p *plan, name string) *buffer {
	for _, b := range p.bufs {
		if b.name == name {
			return b
		}
	}
	return nil
}

// inputInit is an input's generator: indices below 1024 for integers
// (below the kernel's vocabulary size when it takes one: boundIndices;
// below V when another kernel takes it: indexBelowV), normal(0, 1)
// otherwise.
func inputInit(p *plan, dt string) string {
	switch {
	case !isIntDType(dt):
		return "normal(0, 1)"
	case dt == "u8":
		return "randint(0, 256)" // bytes: an image's pixels, packed or quantized values
	case dt == "i8":
		return "randint(-128, 128)"
	}
	return "randint(0, 1024)"
}

// indexBelowV bounds the integer inputs left at randint(0, 1024): below
// V when a kernel takes a vocabulary size V (a guess, with a TODO), else
// a TODO to bound them by the size they index.
func indexBelowV(p *plan) {
	for _, b := range p.bufs {
		if !isIntDType(b.dtype) || b.init != inputInit(p, b.dtype) || b.dtype == "u8" || b.dtype == "i8" {
			continue
		}
		if p.taken["V"] == "dim" {
			b.init = "randint(0, V)"
			b.index = "TODO: guessed indices below V"
			continue
		}
		b.index = "TODO: indices below 1024: bound them by the size they index, e.g. randint(0, V) with a dim V"
	}
}

// metalTakesStruct reports whether a kernel takes a `constant P& p`
// parameter struct, whose fields mltop binds after the buffers.
func metalTakesStruct(c *context, k *kernelScan) bool {
	for _, prm := range k.sig.Bindable() {
		if prm.Pointer && strings.Contains(prm.Type, "constant") && !strings.Contains(prm.Type, "*") &&
			(c.scalarStruct(prm.Pointee) != nil || c.metalStruct(prm.Pointee) != nil) {
			return true
		}
	}
	return false
}

func hasArrayField(fs []metal.StructField) bool {
	for _, f := range fs {
		if f.Count > 1 {
			return true
		}
	}
	return false
}

// fieldDecl is an array field as declared: "nef1[3] (int32_t)".
func fieldDecl(f metal.StructField) string {
	return fmt.Sprintf("%s[%d] (%s)", f.Name, f.Count, f.Type)
}

func metalFieldNames(fs []metal.StructField) string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
		if f.Count > 1 {
			names[i] = fmt.Sprintf("%s[%d]", f.Name, f.Count)
		}
	}
	return strings.Join(names, ", ")
}

// pointerCast is a cast to a pointer type (`(device const float *)`,
// `(const half2*)`) and the rest of its statement.
var pointerCast = regexp.MustCompile(`\(\s*(?:(?:device|constant|threadgroup|const|volatile)\s+)*([A-Za-z_]\w*)\s*\*\s*\)([^;]*)`)

// charCast is the dtype a char* parameter holds when the body casts it
// (or an offset of it) to a pointer of another element type, as ggml's
// kernels read `device const char * src0` through `(device const float *)
// ((device const char *) src0 + i * nb01)`: the first such type's dtype;
// "" when no cast names one (a char* of bytes stays u8).
func (c *context) charCast(k *kernelScan, pname string) string {
	name := regexp.MustCompile(`\b` + regexp.QuoteMeta(pname) + `\b`)
	for _, m := range pointerCast.FindAllStringSubmatch(c.bodyText(k.body), -1) {
		if m[1] == "char" || !name.MatchString(m[2]) {
			continue
		}
		if dt := cTypes[m[1]]; dt != "" {
			return dt
		}
		if v, ok := vectorType(m[1], c.lang); ok && cTypes[v.scalar] != "" {
			return cTypes[v.scalar]
		}
	}
	return ""
}
