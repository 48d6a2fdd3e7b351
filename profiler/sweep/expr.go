package sweep

import (
	"fmt"
	"strconv"
	"unicode"
)

// Expr is a `where` filter: integer arithmetic (+ - * / %), comparisons
// (== != < <= > >=), && || ! and parentheses over knob, dim and flag names.
type Expr struct {
	root node
	src  string
}

type node interface {
	eval(v map[string]int) (int, error)
}

type (
	numNode   int
	identNode string
	unaryNode struct {
		op string
		x  node
	}
	binNode struct {
		op   string
		l, r node
	}
)

func (n numNode) eval(map[string]int) (int, error) { return int(n), nil }
func (n identNode) eval(v map[string]int) (int, error) {
	x, ok := v[string(n)]
	if !ok {
		return 0, fmt.Errorf("%q is not set", string(n))
	}
	return x, nil
}
func (n unaryNode) eval(v map[string]int) (int, error) {
	x, err := n.x.eval(v)
	if err != nil {
		return 0, err
	}
	if n.op == "-" {
		return -x, nil
	}
	return b2i(x == 0), nil
}
func (n binNode) eval(v map[string]int) (int, error) {
	l, err := n.l.eval(v)
	if err != nil {
		return 0, err
	}
	// short-circuit
	if n.op == "&&" && l == 0 {
		return 0, nil
	}
	if n.op == "||" && l != 0 {
		return 1, nil
	}
	r, err := n.r.eval(v)
	if err != nil {
		return 0, err
	}
	switch n.op {
	case "+":
		return l + r, nil
	case "-":
		return l - r, nil
	case "*":
		return l * r, nil
	case "/", "%":
		if r == 0 {
			return 0, fmt.Errorf("division by zero")
		}
		if n.op == "/" {
			return l / r, nil
		}
		return l % r, nil
	case "==":
		return b2i(l == r), nil
	case "!=":
		return b2i(l != r), nil
	case "<":
		return b2i(l < r), nil
	case "<=":
		return b2i(l <= r), nil
	case ">":
		return b2i(l > r), nil
	case ">=":
		return b2i(l >= r), nil
	case "&&", "||":
		return b2i(r != 0), nil
	}
	return 0, fmt.Errorf("unknown operator %s", n.op)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Eval reports whether the filter holds for the variables.
func (e *Expr) Eval(v map[string]int) (bool, error) {
	x, err := e.root.eval(v)
	if err != nil {
		return false, fmt.Errorf("where %q: %v", e.src, err)
	}
	return x != 0, nil
}

// Idents lists the names the expression uses.
func (e *Expr) Idents() []string {
	var out []string
	var walk func(n node)
	walk = func(n node) {
		switch t := n.(type) {
		case identNode:
			out = append(out, string(t))
		case unaryNode:
			walk(t.x)
		case binNode:
			walk(t.l)
			walk(t.r)
		}
	}
	walk(e.root)
	return out
}

// ParseExpr parses a filter.
func ParseExpr(s string) (*Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks}
	n, err := p.parse(0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		return nil, fmt.Errorf("unexpected %q", p.toks[p.pos])
	}
	return &Expr{root: n, src: s}, nil
}

var precedence = map[string]int{"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4, "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}

type exprParser struct {
	toks []string
	pos  int
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) parse(minPrec int) (node, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		op := p.peek()
		prec, ok := precedence[op]
		if !ok || prec < minPrec {
			return l, nil
		}
		p.pos++
		r, err := p.parse(prec + 1)
		if err != nil {
			return nil, err
		}
		l = binNode{op: op, l: l, r: r}
	}
}

func (p *exprParser) unary() (node, error) {
	t := p.peek()
	switch {
	case t == "":
		return nil, fmt.Errorf("expression ends early")
	case t == "-" || t == "!":
		p.pos++
		x, err := p.unary()
		if err != nil {
			return nil, err
		}
		return unaryNode{op: t, x: x}, nil
	case t == "(":
		p.pos++
		n, err := p.parse(0)
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("missing )")
		}
		p.pos++
		return n, nil
	case unicode.IsDigit(rune(t[0])):
		p.pos++
		v, err := strconv.Atoi(t)
		if err != nil {
			return nil, fmt.Errorf("bad number %q", t)
		}
		return numNode(v), nil
	case unicode.IsLetter(rune(t[0])) || t[0] == '_':
		p.pos++
		switch t {
		case "true":
			return numNode(1), nil
		case "false":
			return numNode(0), nil
		}
		return identNode(t), nil
	}
	return nil, fmt.Errorf("unexpected %q", t)
}

func lex(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := rune(s[i])
		switch {
		case c == ' ' || c == '\t':
			i++
		case unicode.IsDigit(c):
			j := i
			for j < len(s) && unicode.IsDigit(rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		case unicode.IsLetter(c) || c == '_':
			j := i
			for j < len(s) && (unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j])) || s[j] == '_') {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		default:
			if i+1 < len(s) {
				two := s[i : i+2]
				if _, ok := precedence[two]; ok {
					toks = append(toks, two)
					i += 2
					continue
				}
			}
			one := string(c)
			if _, ok := precedence[one]; ok || one == "(" || one == ")" || one == "!" {
				toks = append(toks, one)
				i++
				continue
			}
			return nil, fmt.Errorf("unexpected character %q at %d", one, i+1)
		}
	}
	return toks, nil
}
