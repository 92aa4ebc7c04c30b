package layout

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
	"testing"
)

// maxSentenceWords bounds a sentence of a comment.
const maxSentenceWords = 40

// sentenceEnd ends a sentence: a stop, or the start of a list item.
var sentenceEnd = regexp.MustCompile(`[.!?](\s|$)|\n\s*- `)

// Comments give one reason per sentence, in sentences a reader takes in
// at once: none runs past 40 words, in the library or the product. Code
// blocks (tab-indented lines) are not prose and are not counted.
func TestCommentsAreShortSentences(t *testing.T) {
	sources(t, func(path string, f *ast.File, fset *token.FileSet) {
		for _, cg := range f.Comments {
			var prose []string
			for _, line := range strings.Split(cg.Text(), "\n") {
				if !strings.HasPrefix(line, "\t") {
					prose = append(prose, line)
				}
			}
			for _, s := range sentenceEnd.Split(strings.Join(prose, "\n"), -1) {
				if n := len(strings.Fields(s)); n > maxSentenceWords {
					t.Errorf("%s: a sentence of %d words (at most %d): %.60s…", fset.Position(cg.Pos()), n, maxSentenceWords, strings.Join(strings.Fields(s), " "))
				}
			}
		}
	})
}
