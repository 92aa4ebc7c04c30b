// Package look is how mcpgate's pages look: one stylesheet for the
// console and for the pages people see when they sign in (the built-in
// authorization server's sign-in and consent). They so read the same, on
// a desk and on a phone's width.
package look

import (
	_ "embed"
	"html/template"
)

//go:embed look.css
var css string

// CSS is the stylesheet, for a page's <style> element.
func CSS() template.CSS { return template.CSS(css) }
