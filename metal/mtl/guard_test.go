package mtl

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// msgNames lists the table's constants by value, read from table.go.
func msgNames(t *testing.T) map[string]msg {
	t.Helper()
	af, err := parser.ParseFile(token.NewFileSet(), "table.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]msg{}
	for _, d := range af.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST || len(gd.Specs) == 0 {
			continue
		}
		first := gd.Specs[0].(*ast.ValueSpec)
		if first.Names[0].Name != "msgAlloc" {
			continue
		}
		for i, sp := range gd.Specs {
			out[sp.(*ast.ValueSpec).Names[0].Name] = msg(i)
		}
	}
	if len(out) != int(numMsgs)+1 { // + numMsgs itself
		t.Fatalf("read %d constants from table.go, want %d", len(out), numMsgs+1)
	}
	delete(out, "numMsgs")
	return out
}

// sendsByFunc lists, per function of the darwin sources, the msg
// constants each of send, sendT, sendClass and responds is called with.
func sendsByFunc(t *testing.T) map[string]map[string][]string {
	t.Helper()
	files, err := filepath.Glob("*_darwin.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no darwin sources: %v", err)
	}
	// function → callee (send, sendT, sendClass, responds) → msg constants
	out := map[string]map[string][]string{}
	fset := token.NewFileSet()
	for _, f := range files {
		af, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil && len(fd.Recv.List) == 1 {
				if id, ok := fd.Recv.List[0].Type.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			calls := map[string][]string{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				c, ok := n.(*ast.CallExpr)
				if !ok || len(c.Args) < 2 {
					return true
				}
				var callee string
				switch fn := c.Fun.(type) {
				case *ast.Ident:
					callee = fn.Name
				case *ast.IndexExpr: // sendT[T]
					if id, ok := fn.X.(*ast.Ident); ok {
						callee = id.Name
					}
				}
				if id, ok := c.Args[1].(*ast.Ident); ok && len(id.Name) > 3 && id.Name[:3] == "msg" {
					calls[callee] = append(calls[callee], id.Name)
				}
				return true
			})
			out[name] = calls
		}
	}
	return out
}

// A message that some macOS releases lack (a row with Since) is sent only
// by functions that ask respondsToSelector: for it first; and every row
// of the table is sent somewhere (no dead rows).
func TestSinceRowsAreGuarded(t *testing.T) {
	names := msgNames(t)
	used := map[string]bool{}
	for fn, calls := range sendsByFunc(t) {
		guarded := map[string]bool{}
		for _, m := range calls["responds"] {
			guarded[m] = true
		}
		for _, callee := range []string{"send", "sendT", "sendClass"} {
			for _, m := range calls[callee] {
				used[m] = true
				id, ok := names[m]
				if !ok {
					t.Errorf("%s sends %s, which is not a row of the table", fn, m)
					continue
				}
				if methods[id].Since != "" && !guarded[m] {
					t.Errorf("%s sends %s (%s, since %s) without asking respondsToSelector: first", fn, m, methods[id], methods[id].Since)
				}
			}
		}
	}
	for n, id := range names {
		if !used[n] {
			t.Errorf("%s (%s) is registered but never sent", n, methods[id])
		}
	}
}
