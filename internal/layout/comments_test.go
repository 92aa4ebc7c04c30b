package layout

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// library are the packages a stranger's program may import: what go doc
// shows them should read as a tutorial.
var library = []string{"jsonrpc", "sse", "mcp", "mcphttp", "stdio", "wire", "wiremcp"}

// maxSentenceWords bounds a sentence of the library's comments.
const maxSentenceWords = 40

// sentenceEnd ends a sentence: a stop, or the start of a list item.
var sentenceEnd = regexp.MustCompile(`[.!?](\s|$)|\n\s*- `)

// The library's comments give one reason per sentence, in sentences a
// reader takes in at once: none runs past 40 words. Code blocks (indented
// lines) are not prose and are not counted.
func TestTheLibrarysCommentsAreShortSentences(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, pkg := range library {
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, cg := range f.Comments {
				var prose []string
				for _, line := range strings.Split(cg.Text(), "\n") {
					if !strings.HasPrefix(line, "\t") && !strings.HasPrefix(line, "    ") {
						prose = append(prose, line)
					}
				}
				for _, s := range sentenceEnd.Split(strings.Join(prose, "\n"), -1) {
					if n := len(strings.Fields(s)); n > maxSentenceWords {
						t.Errorf("%s: a sentence of %d words (at most %d): %.60s…", fset.Position(cg.Pos()), n, maxSentenceWords, strings.Join(strings.Fields(s), " "))
					}
				}
			}
		}
	}
}
