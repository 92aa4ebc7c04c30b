package layout

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sources calls fn with every non-test Go file of the module, parsed.
func sources(t *testing.T, fn func(path string, f *ast.File, fset *token.FileSet)) {
	t.Helper()
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fn(filepath.ToSlash(rel), f, fset)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// homes are words of a contract between packages and the one file that
// may spell them; everyone else uses the constant or the type.
var homes = map[string]string{
	"transport error": "mcp/toolarge.go", // mcp.TransportError
	"too_large":       "mcp/errorkind.go",
	"session_limit":   "mcp/errorkind.go",
	"task_limit":      "mcp/errorkind.go",
	"ambiguous_key":   "mcp/errorkind.go",
}

var jsonrpcCode = regexp.MustCompile(`^-3\d{4}$`)

// A contract between packages is a type or a constant the compiler
// checks, never a string two files agree on: no error is told by its
// message, no data.kind is written or matched as a literal, no JSON-RPC
// code is compared as text. Nor is it a value hidden in a context: what a
// relay sends upstream (_meta members, headers) is an mcp.Outbound, and
// the one context value is the caller's identity.
func TestContractsAreTypesNotStrings(t *testing.T) {
	sources(t, func(path string, f *ast.File, fset *token.FileSet) {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, _ := strconv.Unquote(n.Value)
				for word, home := range homes {
					if strings.Contains(s, word) && path != home {
						t.Errorf("%s: %q spells a contract whose home is %s: use its constant or type", fset.Position(n.Pos()), s, home)
					}
				}
				if jsonrpcCode.MatchString(s) {
					t.Errorf("%s: the JSON-RPC code %s compared as text: parse it and compare the constant", fset.Position(n.Pos()), s)
				}
			case *ast.BinaryExpr:
				if n.Op == token.SUB && isCap(n.X) && isCap(n.Y) && path != "jsonrpc/splice.go" {
					t.Errorf("%s: a value's offset by capacity arithmetic: use jsonrpc.Offset or ValueSpan", fset.Position(n.Pos()))
				}
			case *ast.KeyValueExpr:
				k, ok1 := n.Key.(*ast.BasicLit)
				v, ok2 := n.Value.(*ast.BasicLit)
				if ok1 && ok2 && k.Value == `"kind"` && v.Kind == token.STRING {
					t.Errorf("%s: data.kind %s written as a literal: use an mcp.ErrorKind", fset.Position(n.Pos()), v.Value)
				}
			case *ast.CallExpr:
				if isContextWithValue(n) && path != "mcp/identity.go" && !isOAuth2Client(n) {
					t.Errorf("%s: a value passed in a context: pass it explicitly (the caller's identity is the one context value, mcp/identity.go)", fset.Position(n.Pos()))
				}
				if looksUpRequestMeta(n) {
					t.Errorf("%s: a request's _meta looked up again: read Request.Meta, looked up once", fset.Position(n.Pos()))
				}
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok || len(n.Args) == 0 || (sel.Sel.Name != "HasPrefix" && sel.Sel.Name != "Contains" && sel.Sel.Name != "HasSuffix") {
					return true
				}
				if call, ok := n.Args[0].(*ast.CallExpr); ok {
					if s, ok := call.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "Error" && len(call.Args) == 0 {
						t.Errorf("%s: an error told by its message: give it a type", fset.Position(n.Pos()))
					}
				}
			}
			return true
		})
	})
}

func isContextWithValue(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "WithValue" {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "context"
}

// isOAuth2Client is golang.org/x/oauth2's own way to be given an HTTP
// client: a context value it reads.
func isOAuth2Client(c *ast.CallExpr) bool {
	if len(c.Args) < 2 {
		return false
	}
	sel, ok := c.Args[1].(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return ok && pkg.Name == "oauth2" && sel.Sel.Name == "HTTPClient"
}

// looksUpRequestMeta reports a jsonrpc lookup of "_meta" in a request's
// params (x.Params).
func looksUpRequestMeta(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || len(c.Args) != 2 || (sel.Sel.Name != "Lookup" && sel.Sel.Name != "LookupString") {
		return false
	}
	params, ok := c.Args[0].(*ast.SelectorExpr)
	key, ok2 := c.Args[1].(*ast.BasicLit)
	return ok && ok2 && params.Sel.Name == "Params" && key.Value == `"_meta"`
}

func isCap(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	id, ok := c.Fun.(*ast.Ident)
	return ok && id.Name == "cap"
}
