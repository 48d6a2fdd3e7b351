package csrc

// A class that device code uses is kept whole, but NVRTC refuses any
// function explicitly marked __host__ alone ("not allowed in JIT mode"),
// a member function too: flashinfer's IntFastDiv has a __host__
// constructor that computes its magic numbers and throws on a zero
// divisor. Such members are host code like a top-level __host__
// function, and are blanked with it (Blank); the class and its other
// members stay.

// hostMembers lists the member functions (declarations and definitions,
// with their template heads) of the class body whose "{" is toks[open]
// that say __host__ (directly or through a macro) and neither __device__
// nor __global__; nested classes' too. Members without an execution space
// stay: NVRTC accepts them (nvcc's implicit __host__ is not explicit).
func (s *scanner) hostMembers(open int) [][2]int {
	t := s.toks
	end := s.skip(open, "{", "}") - 1 // the closing "}"
	var out [][2]int
	for k := open + 1; k < end; {
		switch {
		case t[k].text == ";":
			k++
			continue
		case (t[k].text == "public" || t[k].text == "private" || t[k].text == "protected") && k+1 < end && t[k+1].text == ":":
			k += 2
			continue
		}
		next, host, nested := s.member(k, end)
		out = append(out, nested...)
		if host {
			out = append(out, [2]int{t[k].start, t[next-1].end})
		}
		k = next
	}
	return out
}

// member reads the member declaration at toks[k] (ending before toks[end]
// at the latest) and returns the index after it, whether it is a function
// marked __host__ alone, and the host members of a class it defines.
func (s *scanner) member(k, end int) (next int, host bool, nested [][2]int) {
	t := s.toks
	var words []string
	paren, eq, classKey := false, false, false
	for i := k; i < end; i++ {
		x := t[i].text
		switch {
		case x == ";":
			return i + 1, paren && !classKey && hostOnly(words), nested
		case x == "{":
			if classKey && !paren && !eq {
				nested = append(nested, s.hostMembers(i)...)
				i = s.skip(i, "{", "}") - 1
				continue
			}
			after := s.skip(i, "{", "}")
			if paren && !eq {
				// a function body: the member ends with it (a ";" after it is its own)
				return after, hostOnly(words), nested
			}
			i = after - 1 // an initializer
		case x == "<" && i == k+1 && t[k].text == "template":
			i = s.skipAngles(i) - 1
		case x == "(" || x == "[":
			if x == "(" && !paren && !eq && !specCalls[t[max(i-1, k)].text] {
				paren = true
			}
			i = s.skip(i, x, map[string]string{"(": ")", "[": "]"}[x]) - 1
		case x == "[[":
			i = s.skip(i, "[[", "]]") - 1
		case x == ":" && paren && !eq:
			// a constructor's initializers, a(…) or a{…} each: the body is
			// the "{" after one of them ends
			i = s.initializers(i+1, end) - 1
		case x == "operator" && !paren:
			// operator=, operator(), operator<: up to the parameter list
			j := i + 1
			if j < end && t[j].text == "(" {
				j = s.skip(j, "(", ")")
			}
			for j < end && t[j].text != "(" && t[j].text != ";" && t[j].text != "{" {
				j++
			}
			i = j - 1
		case x == "=":
			eq = true
		case t[i].kind == Ident && !paren:
			switch x {
			case "struct", "class", "union", "enum":
				classKey = true
			}
			words = append(words, s.expand(x)...)
		}
	}
	return end, false, nested
}

// initializers skips a constructor's member initializers from toks[i] and
// returns the index of its body's "{" (or of the end).
func (s *scanner) initializers(i, end int) int {
	t := s.toks
	for i < end {
		switch t[i].text {
		case "(":
			i = s.skip(i, "(", ")")
		case "{":
			if i > 0 && (t[i-1].text == ")" || t[i-1].text == "}" || t[i-1].text == "...") {
				return i // after an initializer: the body
			}
			i = s.skip(i, "{", "}")
		case ";":
			return i
		default:
			i++
		}
	}
	return i
}

// hostOnly says whether a declaration's specifiers mark it __host__ alone.
func hostOnly(words []string) bool {
	host := false
	for _, w := range words {
		switch w {
		case "__device__", "__global__":
			return false
		case "__host__":
			host = true
		}
	}
	return host
}
