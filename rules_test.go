package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The house's rules, kept by a test rather than by comments: small files,
// small functions, small types, HTTP only where the contract lives, and no
// room of sim grown into a second house.
const (
	maxFileLines    = 300
	maxFuncLines    = 80
	maxMethods      = 25
	maxSimPkgLines  = 2000
	generatedSuffix = "_templ.go"
)

// httpAllowed are the places that may import net/http.
var httpAllowed = []string{"web/", "api/", "sim/client/", "run.go"}

// handWritten lists the repository's hand-written source files (Go, templ,
// CSS and JavaScript), skipping generated and vendored ones.
func handWritten(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		switch ext := filepath.Ext(path); {
		case strings.HasSuffix(path, generatedSuffix):
		case ext == ".go" || ext == ".templ" || ext == ".css":
			files = append(files, path)
		case ext == ".js" && !strings.Contains(d.Name(), ".min.") && !strings.HasPrefix(d.Name(), "htmx"):
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func lineCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestHouseFilesAreSmall(t *testing.T) {
	t.Parallel()
	simLines := map[string]int{}
	for _, path := range handWritten(t) {
		n := lineCount(t, path)
		if n > maxFileLines {
			t.Errorf("%s has %d lines; keep a hand-written file to %d", path, n, maxFileLines)
		}
		if strings.HasPrefix(path, "sim/") && strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			simLines[filepath.Dir(path)] += n
		}
	}
	for pkg, n := range simLines {
		if n > maxSimPkgLines {
			t.Errorf("package %s has %d lines; split a room over %d", pkg, n, maxSimPkgLines)
		}
	}
}

func TestHouseFunctionsAndTypesAreSmall(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	methods := map[string]int{} // "dir.Type" → methods
	for _, path := range handWritten(t) {
		if filepath.Ext(path) != ".go" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if lines > maxFuncLines {
				t.Errorf("%s: func %s has %d lines; keep a function to %d (a table is a value)", path, fn.Name.Name, lines, maxFuncLines)
			}
			if fn.Recv != nil && len(fn.Recv.List) == 1 && !strings.HasSuffix(path, "_test.go") {
				methods[filepath.Dir(path)+"."+receiverName(fn.Recv.List[0].Type)]++
			}
		}
	}
	for typ, n := range methods {
		if n > maxMethods {
			t.Errorf("type %s has %d methods; keep a type to about %d", typ, n, maxMethods)
		}
	}
}

func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

func TestHouseHTTPStaysAtTheDoor(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	for _, path := range handWritten(t) {
		if filepath.Ext(path) != ".go" || strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p != "net/http" && !strings.HasPrefix(p, "net/http/") {
				continue
			}
			allowed := false
			for _, prefix := range httpAllowed {
				allowed = allowed || strings.HasPrefix(filepath.ToSlash(path), prefix)
			}
			if !allowed {
				t.Errorf("%s imports %s; only %v may", path, p, httpAllowed)
			}
		}
	}
}
