package csrc

import "strconv"

// nvrtcMacros are the macros that sources test to tell the compiler apart,
// as NVRTC (which compiles device code only) sees them: __CUDACC__,
// __CUDACC_RTC__ and __CUDA_ARCH__ are defined; __NVCC__ is not (nvcc
// defines it, NVRTC does not). Scan decides `#ifdef __CUDACC__`,
// `#if !defined(__CUDA_ARCH__)` and the like by them; a condition on any
// other name leaves every branch live. HIP's compiler macros and
// PyTorch's USE_ROCM (its build flag for AMD GPUs) are never defined when
// NVRTC compiles for an NVIDIA GPU: mamba's `#ifndef USE_ROCM … #else
// namespace cub = hipcub; #endif` then keeps CUB, not the empty hipcub stub.
var nvrtcMacros = map[string]bool{"__CUDACC__": true, "__CUDACC_RTC__": true, "__CUDA_ARCH__": true, "__NVCC__": false,
	"__HIPCC__": false, "__HIP__": false, "__HIP_PLATFORM_AMD__": false, "__HIP_PLATFORM_HCC__": false,
	"__HIP_DEVICE_COMPILE__": false, "USE_ROCM": false}

// condValue is the value of a conditional directive's condition: +1 true,
// -1 false, 0 unknown. known says which macros are defined (true) or not
// (false); every other name is unknown. Only literals, `defined`, !, &&,
// || and parentheses are evaluated; a comparison or arithmetic is unknown
// (`#if __CUDA_ARCH__ >= 800`), but `defined(__CUDACC__) || __HIP__ == 1`
// is true all the same.
func condValue(kind, cond string, known map[string]bool) int8 {
	return condValueIn(kind, cond, known, nil)
}

// condValueIn is condValue where values give macros integer values: then
// the comparisons and arithmetic of integer literals and those macros are
// evaluated as the preprocessor does (`#if __METAL_VERSION__ >= 220`);
// with nil values they stay unknown.
func condValueIn(kind, cond string, known map[string]bool, values map[string]int64) int8 {
	switch kind {
	case "ifdef", "elifdef", "ifndef", "elifndef":
		v := int8(0)
		if def, ok := known[cond]; ok {
			v = -1
			if def {
				v = 1
			}
		}
		if kind == "ifndef" || kind == "elifndef" {
			v = -v
		}
		return v
	case "if", "elif":
		e := &condParser{toks: condTokens(cond), known: known, values: values}
		v := e.or()
		if e.bad || e.i != len(e.toks) {
			return 0
		}
		return v
	}
	return 0
}

// condTokens splits a condition into identifiers, numbers and operators.
func condTokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case isIdentByte(c) || isDigit(c):
			j := i
			for j < len(s) && (isIdentByte(s[j]) || isDigit(s[j])) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case i+1 < len(s) && twoCharOps[s[i:i+2]]:
			out = append(out, s[i:i+2])
			i += 2
		default:
			out = append(out, s[i:i+1])
			i++
		}
	}
	return out
}

var twoCharOps = map[string]bool{"&&": true, "||": true, "==": true, "!=": true, "<=": true, ">=": true, "<<": true, ">>": true}

// arithOps are the binary operators whose result condParser leaves
// unknown: `__HIP__ == 1`, `__CUDA_ARCH__ >= 800`.
var arithOps = map[string]bool{"==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true, "+": true, "-": true,
	"*": true, "/": true, "%": true, "<<": true, ">>": true, "&": true, "|": true, "^": true}

// condParser evaluates a condition in three values (Kleene's logic:
// `unknown || true` is true, `unknown && false` is false).
type condParser struct {
	toks  []string
	i     int
	known map[string]bool
	// values: the integer values of macros; non-nil, integer expressions
	// over literals and these macros are evaluated (num)
	values map[string]int64
	bad    bool // an operator or form it does not evaluate
}

func (p *condParser) peek() string {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return ""
}

func (p *condParser) or() int8 {
	v := p.and()
	for p.peek() == "||" {
		p.i++
		v = max(v, p.and())
	}
	return v
}

func (p *condParser) and() int8 {
	v := p.arith()
	for p.peek() == "&&" {
		p.i++
		v = min(v, p.arith())
	}
	return v
}

// arith reads operands joined by comparisons and arithmetic: unknown
// unless it is one operand.
func (p *condParser) arith() int8 {
	if p.values != nil {
		ip := &intParser{toks: p.toks[p.i:], cond: true, values: p.values}
		if n, ok := ip.binary(0); ok {
			if next := ip.peek(); next == "" || next == "&&" || next == "||" || next == ")" {
				p.i += ip.i
				if n != 0 {
					return 1
				}
				return -1
			}
		}
	}
	v := p.unary()
	for arithOps[p.peek()] {
		p.i++
		p.unary()
		v = 0
	}
	return v
}

func (p *condParser) unary() int8 {
	switch t := p.peek(); {
	case t == "!":
		p.i++
		return -p.unary()
	case t == "-" || t == "+" || t == "~":
		p.i++
		p.unary()
		return 0
	case t == "(":
		p.i++
		v := p.or()
		if p.peek() != ")" {
			p.bad = true
			return 0
		}
		p.i++
		return v
	case t == "defined":
		p.i++
		paren := p.peek() == "("
		if paren {
			p.i++
		}
		name := p.peek()
		if name == "" || !isIdentByte(name[0]) {
			p.bad = true
			return 0
		}
		p.i++
		if paren {
			if p.peek() != ")" {
				p.bad = true
				return 0
			}
			p.i++
		}
		if def, ok := p.known[name]; ok {
			if def {
				return 1
			}
			return -1
		}
		return 0
	case t == "true" || t == "false":
		p.i++
		if t == "true" {
			return 1
		}
		return -1
	case t != "" && isDigit(t[0]):
		p.i++
		n, err := strconv.ParseUint(t, 10, 64)
		if err != nil {
			return 0 // 0x10, 1L: a number it does not read
		}
		if n != 0 {
			return 1
		}
		return -1
	case t != "" && isIdentByte(t[0]):
		p.i++
		if p.peek() == "(" { // a function-like macro's or __has_include's call
			depth := 0
			for ; p.i < len(p.toks); p.i++ {
				if p.toks[p.i] == "(" {
					depth++
				} else if p.toks[p.i] == ")" {
					if depth--; depth == 0 {
						p.i++
						break
					}
				}
			}
		}
		return 0
	}
	p.bad = true
	return 0
}

// forget returns known, less the names a live #define or
// #undef of the source changes: after `#undef __CUDA_ARCH__` a test of it
// is no longer the compiler's.
func forget(known map[string]bool, d *Directive) map[string]bool {
	var name string
	switch d.Kind {
	case "define":
		name = d.Defines
	case "undef":
		if len(d.Tests) > 0 {
			name = d.Tests[0]
		}
	}
	if _, ok := known[name]; !ok || name == "" {
		return known
	}
	out := map[string]bool{}
	for k, v := range known {
		if k != name {
			out[k] = v
		}
	}
	return out
}
