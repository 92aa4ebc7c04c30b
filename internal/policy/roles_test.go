// roles_test.go pins the role hierarchy (spec §6): viewer < editor < admin,
// custom names stand for their base role, and anything nobody configured
// is refused — on either side of the comparison, admin included.

package policy_test

import (
	"strings"
	"testing"

	"github.com/mcpgate/mcpgate/internal/policy"
)

func mustRoles(t testing.TB, custom map[string]string) *policy.Roles {
	t.Helper()
	r, err := policy.NewRoles(custom)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestBaseRolesAreOrderedViewerEditorAdmin(t *testing.T) {
	r := mustRoles(t, nil)
	v, _ := r.Level("viewer")
	e, _ := r.Level("editor")
	a, _ := r.Level("admin")
	if !(0 < v && v < e && e < a) {
		t.Fatalf("levels viewer %d, editor %d, admin %d", v, e, a)
	}
	for _, name := range []string{"", "guest", "Admin", "root"} {
		if l, ok := r.Level(name); ok || r.Known(name) {
			t.Errorf("%q is a role (level %d)", name, l)
		}
	}
}

func TestCustomRolesStandForTheirBaseRole(t *testing.T) {
	r := mustRoles(t, map[string]string{"intern": "viewer", "sre": "admin", "editor": "editor"})
	tests := []struct{ name, base string }{
		{"intern", "viewer"}, {"sre", "admin"}, {"editor", "editor"}, {"viewer", "viewer"},
	}
	for _, tt := range tests {
		got, ok := r.Base(tt.name)
		want, _ := r.Level(tt.base)
		level, _ := r.Level(tt.name)
		if !ok || got != tt.base || level != want || !r.Known(tt.name) {
			t.Errorf("%s: base %q (known %v), level %d; want base %q level %d", tt.name, got, ok, level, tt.base, want)
		}
	}
}

func TestAllows(t *testing.T) {
	r := mustRoles(t, map[string]string{"intern": "viewer", "sre": "admin"})
	tests := []struct {
		name        string
		caller, min string
		want        bool
	}{
		{"viewer reaches viewer", "viewer", "viewer", true},
		{"viewer does not reach editor", "viewer", "editor", false},
		{"viewer does not reach admin", "viewer", "admin", false},
		{"editor reaches viewer", "editor", "viewer", true},
		{"editor reaches editor", "editor", "editor", true},
		{"editor does not reach admin", "editor", "admin", false},
		{"admin reaches admin", "admin", "admin", true},
		{"empty min role is the viewer floor for viewer", "viewer", "", true},
		{"empty min role is the viewer floor for admin", "admin", "", true},
		{"custom caller role counts as its base", "intern", "viewer", true},
		{"custom caller role is no more than its base", "intern", "editor", false},
		{"custom admin reaches admin", "sre", "admin", true},
		{"custom min role counts as its base", "editor", "intern", true},
		{"unknown min role is refused even for admin", "admin", "superuser", false},
		{"unknown min role is refused even for custom admin", "sre", "Admin", false},
		{"unknown caller role is refused", "guest", "viewer", false},
		{"unknown caller role is refused at the floor", "guest", "", false},
		{"no caller role is refused at the floor", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.Allows(tt.caller, tt.min); got != tt.want {
				t.Fatalf("Allows(%q, %q) = %v, want %v", tt.caller, tt.min, got, tt.want)
			}
		})
	}
}

func TestNewRolesRefusesMappingsThatCannotWork(t *testing.T) {
	tests := []struct {
		name   string
		custom map[string]string
		naming []string // the error names these
	}{
		{"a custom role onto an unknown base role", map[string]string{"intern": "guest"}, []string{`"intern"`, `"guest"`}},
		{"a custom role onto another custom role", map[string]string{"intern": "viewer", "trainee": "intern"}, []string{`"trainee"`, `"intern"`}},
		{"a base role remapped onto another base role", map[string]string{"editor": "admin"}, []string{`"editor"`, `"admin"`}},
		{"a custom role with no name", map[string]string{"": "viewer"}, []string{"name"}},
		{"a base name is case sensitive", map[string]string{"intern": "Viewer"}, []string{`"intern"`, `"Viewer"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := policy.NewRoles(tt.custom)
			if err == nil {
				t.Fatalf("no error; roles %+v", r)
			}
			for _, s := range tt.naming {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not name %s", err, s)
				}
			}
		})
	}
}

func TestTheHighestOfSeveralRolesIsTheirsAndUnknownOnesCountForNothing(t *testing.T) {
	r, err := policy.NewRoles(map[string]string{"sre": policy.Admin, "intern": policy.Viewer})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		roles []string
		want  string
	}{
		{nil, ""},
		{[]string{"nobody"}, ""},
		{[]string{policy.Viewer, policy.Editor}, policy.Editor},
		{[]string{"intern", "nobody", policy.Editor}, policy.Editor},
		{[]string{"sre", policy.Admin}, "sre"},
		{[]string{policy.Admin, "sre"}, policy.Admin},
	} {
		if got := policy.Highest(r.Level, c.roles...); got != c.want {
			t.Errorf("Highest(%q) = %q, want %q", c.roles, got, c.want)
		}
	}
}
