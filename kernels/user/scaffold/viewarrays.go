package scaffold

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/mltop/mltop/kernels/user/csrc"
)

// A Metal kernel that reads a strided view takes its shape and strides as
// small constant arrays beside their rank (candle's `constant size_t
// &num_dims, constant size_t *dims, constant size_t *strides`, MLX's
// `constant const int* shape, constant const int64_t* strides, constant
// const int& ndim`). Such a parameter is an array value in args: (mltop
// sets its elements at its index, as Metal's setBytes would), not a
// buffer: the shape is the kernel's dims, the strides are that shape's
// contiguous (row-major, in elements) ones, the rank is its length, and
// an element-count parameter is their product.

// viewArrays is how a kernel's shape and stride arrays are bound.
type viewArrays struct {
	shape []string          // the dims of the shape, outermost first
	args  map[string]string // parameter name → its arg
	// what the args line says of them (a note, or a TODO where mltop
	// guessed what the source does not say)
	notes []string
}

var (
	shapeArrayLike = regexp.MustCompile(`(?i)^(\w+_)?(dims|shape|shapes|sizes|extents)$`)
	// strideArrayLike: also a short `src_s` (candle's pool2d beside
	// src_dims); only constant integer arrays are taken so
	strideArrayLike = regexp.MustCompile(`(?i)^(\w+_)?strides?(_\w+)?$|^[a-z][a-z0-9]*_s$`)
	rankLike        = regexp.MustCompile(`(?i)^(num_?dims|n_?dims?|ndims?|rank|nd|num_axes|n_axes)$`)
	// countLike: the element count of the view; candle's strided kernels
	// call it dim (unary, binary, affine) or src_numel (reduce)
	countLike = regexp.MustCompile(`(?i)^(n|dim|count|size|numel|num_?el(ement)?s?|total|len|length|el_count|\w+_numel|numel_\w+)$`)
)

// stridedLayout finds a Metal kernel's shape and stride arrays: nil when
// it takes none (or takes a parameter struct, whose fields follow the
// buffers).
func (c *context) stridedLayout(p *plan, k *kernelScan) *viewArrays {
	if c.lang != "metal" || metalTakesStruct(c, k) {
		return nil
	}
	var shapes, strides []csrc.Param
	rank := 0
	for _, prm := range k.sig.Bindable() {
		if !c.constantIntArray(prm) {
			continue
		}
		switch {
		case shapeArrayLike.MatchString(prm.Name):
			shapes = append(shapes, prm)
		case strideArrayLike.MatchString(prm.Name):
			strides = append(strides, prm)
		default:
			continue
		}
		if n, err := strconv.Atoi(prm.Extent); err == nil && n > 0 && rank == 0 {
			rank = n // `constant int shape[3]`: its declared length
		}
	}
	if len(shapes)+len(strides) == 0 {
		return nil
	}
	declared := rank > 0
	if !declared {
		rank = 2
	}
	l := &viewArrays{args: map[string]string{}}
	for _, n := range shapeNames(rank) {
		l.shape = append(l.shape, c.dim(p, k, n, rank)) // one dim alone: 1048576 elements by default
	}
	shapeArg, strideArg := arrayArg(l.shape), arrayArg(contiguousStrides(l.shape))
	var arrays []string
	for _, prm := range shapes {
		l.args[prm.Name] = shapeArg
		arrays = append(arrays, prm.Name)
	}
	for _, prm := range strides {
		l.args[prm.Name] = strideArg
		arrays = append(arrays, prm.Name)
	}
	var rankParams, counts []string
	for _, prm := range k.sig.Bindable() {
		if _, ok := c.intScalarParam(prm); !ok {
			continue
		}
		switch {
		case rankLike.MatchString(prm.Name):
			l.args[prm.Name] = strconv.Itoa(rank)
			rankParams = append(rankParams, prm.Name)
		case countLike.MatchString(prm.Name):
			l.args[prm.Name] = strings.Join(l.shape, " * ")
			counts = append(counts, prm.Name)
		}
	}
	shown := "[" + strings.Join(l.shape, ", ") + "]"
	note := fmt.Sprintf("%s: the %d-d view %s, arrays of %d elements", strings.Join(arrays, ", "), rank, shown, rank)
	if len(strides) > 0 && len(shapes) > 0 {
		note += fmt.Sprintf(", strides %s contiguous (row-major, in elements)", strideArg)
	}
	if len(rankParams) > 0 {
		note += fmt.Sprintf("; %s = %d, its rank", strings.Join(rankParams, ", "), rank)
	}
	if len(counts) > 0 {
		note += fmt.Sprintf("; %s = %s, its element count", strings.Join(counts, ", "), strings.Join(l.shape, " * "))
	}
	if !declared {
		note += "; for another rank, give each array that many elements"
		if len(rankParams) > 0 {
			note += fmt.Sprintf(" and %s that rank", strings.Join(rankParams, ", "))
		}
	}
	l.notes = append(l.notes, note)
	switch {
	case len(shapes) == 0:
		l.notes = append(l.notes, p.todo(fmt.Sprintf("%s: the kernel takes no shape array: the strides of a contiguous %s are a guess; set the strides (and the dims) of the view it reads", strings.Join(arrays, ", "), shown),
			"%s: %s took as the strides of a contiguous %s (no shape array tells the view): set them to the view the kernel reads", k.sig.Entry, strings.Join(arrays, ", "), shown))
	case len(rankParams) == 0 && !declared:
		l.notes = append(l.notes, p.todo(fmt.Sprintf("no rank parameter: rank %d is a guess; give the arrays as many elements as the kernel reads", rank),
			"%s: %s took as a %d-d view %s (no rank parameter or declared length tells the rank): give the arrays as many elements as the kernel reads", k.sig.Entry, strings.Join(arrays, ", "), rank, shown))
	}
	return l
}

// arg is the arg of a parameter that is a shape or stride array, or its
// rank or element count.
func (l *viewArrays) arg(name string) (string, bool) {
	if l == nil || name == "" {
		return "", false
	}
	a, ok := l.args[name]
	return a, ok
}

// constantIntArray says whether a parameter is a Metal `constant` pointer
// to integers (or an array declarator, which Metal makes one).
func (c *context) constantIntArray(prm csrc.Param) bool {
	return prm.Pointer && strings.Contains(prm.Type, "*") && constantWord.MatchString(prm.Type) && c.intType(prm.Pointee)
}

// intScalarParam is the integer type of a scalar parameter: by value, or
// Metal's `constant uint& n`.
func (c *context) intScalarParam(prm csrc.Param) (string, bool) {
	t := prm.Scalar
	if prm.Pointer {
		if strings.Contains(prm.Type, "*") || !constantWord.MatchString(prm.Type) {
			return "", false
		}
		t = prm.Pointee
	}
	if t == "" || !c.intType(t) {
		return "", false
	}
	return t, true
}

var constantWord = regexp.MustCompile(`\bconstant\b`)

// shapeNames are the dims of a view of that rank.
func shapeNames(rank int) []string {
	switch rank {
	case 1:
		return []string{"N"}
	case 2:
		return []string{"rows", "cols"}
	case 3:
		return []string{"B", "rows", "cols"}
	}
	var out []string
	for i := 0; i < rank-2; i++ {
		out = append(out, fmt.Sprintf("D%d", i))
	}
	return append(out, "rows", "cols")
}

// contiguousStrides are a row-major shape's strides in elements.
func contiguousStrides(shape []string) []string {
	out := make([]string, len(shape))
	for i := range shape {
		if i == len(shape)-1 {
			out[i] = "1"
			continue
		}
		out[i] = strings.Join(shape[i+1:], " * ")
	}
	return out
}

// arrayArg writes an array value as args: takes it, [rows, cols].
func arrayArg(elems []string) string {
	q := make([]string, len(elems))
	for i, e := range elems {
		q[i] = quote(e)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
