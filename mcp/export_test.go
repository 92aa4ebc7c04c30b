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

// ServedMethods are the methods s serves: its handlers' and those the
// sessionless front serves itself.
func (s *Server) ServedMethods() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for m := range s.methods {
		out = append(out, m)
	}
	for m := range sessionlessOwn {
		out = append(out, m)
	}
	return out
}

// DeclaresReadKeys reports whether paramkeys.go names the keys method's
// params are read by.
func DeclaresReadKeys(method string) bool {
	_, ok := readKeys[method]
	return ok
}

// CheckParamKeys is the refusal of params whose keys fold together, for
// its benchmark.
var CheckParamKeys = checkParamKeys
