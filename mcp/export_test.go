// export_test.go exposes internals to the black-box tests of package
// mcp_test that cannot reach them through a Session.

package mcp

// MatchURITemplate parses template and matches uri against it, so that the
// fuzz test can drive the matcher without a server around it.
func MatchURITemplate(template, uri string) (vars map[string]string, ok bool, err error) {
	ut, err := parseURITemplate(template)
	if err != nil {
		return nil, false, err
	}
	vars, ok = ut.match(uri)
	return vars, ok, nil
}
