// diverge_test.go pins the reading of DIVERGE.md: front matter keys in
// order and the Markdown as "readme", the file without front matter, the
// shapes "secrets" and "arguments" must have, and every way the file can
// fail to parse.

package proxy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseInfo(t *testing.T) {
	for _, c := range []struct {
		name      string
		file      string
		doc       string
		secrets   []string
		arguments string
	}{
		{
			name: "front matter and readme",
			file: "---\ntitle: Weather\narguments:\n  type: object\n  properties:\n    city: {type: string}\n  required: [city]\n" +
				"secrets: [API_KEY, REGION_TOKEN]\nbig: 123456789012345678901234567890\n---\n# Weather\n\nAsk <me> & see.\n",
			doc: `{"title":"Weather","arguments":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},` +
				`"secrets":["API_KEY","REGION_TOKEN"],"big":123456789012345678901234567890,"readme":"# Weather\n\nAsk <me> & see.\n"}`,
			secrets:   []string{"API_KEY", "REGION_TOKEN"},
			arguments: `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
		},
		{
			name: "no front matter: the whole file is the readme",
			file: "# Tool\n\n---\n\ntext\n",
			doc:  `{"readme":"# Tool\n\n---\n\ntext\n"}`,
		},
		{name: "empty file", file: "", doc: `{"readme":""}`},
		{name: "empty front matter", file: "---\n---\nbody", doc: `{"readme":"body"}`},
		{name: "front matter of comments only", file: "---\n# nothing yet\n---\n", doc: `{"readme":""}`},
		{name: "front matter ending the file", file: "---\na: 1\n---", doc: `{"a":1,"readme":""}`},
		{
			name: "CRLF line ends and a byte order mark",
			file: "\uFEFF---\r\nsecrets:\r\n  - TOKEN\r\n---\r\nhi\r\n",
			doc:  `{"secrets":["TOKEN"],"readme":"hi\r\n"}`, secrets: []string{"TOKEN"},
		},
		{
			name: "YAML scalars become their JSON",
			file: "---\nyes: true\nnone: ~\nhex: 0x1F\nplus: +12\nfloat: 1.50\nexp: 6.02e+23\nwhen: 2024-01-02\nquoted: \"007\"\nempty: []\n---\n",
			doc:  `{"yes":true,"none":null,"hex":31,"plus":12,"float":1.50,"exp":6.02e+23,"when":"2024-01-02","quoted":"007","empty":[],"readme":""}`,
		},
		{
			name: "anchors, aliases and merge keys",
			file: "---\nbase: &b {x: 1, y: 2}\nmore:\n  <<: *b\n  y: 3\nlist: [*b]\n---\n",
			doc:  `{"base":{"x":1,"y":2},"more":{"y":3,"x":1},"list":[{"x":1,"y":2}],"readme":""}`,
		},
		{name: "a boolean schema", file: "---\narguments: true\n---\n", doc: `{"arguments":true,"readme":""}`, arguments: `true`},
		{name: "no secrets declared", file: "---\nsecrets: []\n---\n", doc: `{"secrets":[],"readme":""}`, secrets: []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := ParseInfo([]byte(c.file))
			if err != nil {
				t.Fatal(err)
			}
			if string(info.Doc) != c.doc {
				t.Errorf("doc\n got %s\nwant %s", info.Doc, c.doc)
			}
			if strings.Join(info.Secrets, ",") != strings.Join(c.secrets, ",") || (info.Secrets == nil) != (c.secrets == nil) {
				t.Errorf("secrets %#v, want %#v", info.Secrets, c.secrets)
			}
			if string(info.ArgumentsSchema) != c.arguments {
				t.Errorf("arguments %s, want %s", info.ArgumentsSchema, c.arguments)
			}
		})
	}
}

func TestParseInfoRefuses(t *testing.T) {
	laughs := "---\na: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := 0, "a"; i < 12; i++ {
		name := string(rune('b' + i))
		laughs += name + ": &" + name + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
		prev = name
	}
	laughs += "---\n"
	for _, c := range []struct {
		name, file, says string
	}{
		{"secrets not a list", "---\nsecrets: API_KEY\n---\n", "secrets must be a list"},
		{"secrets null", "---\nsecrets:\n---\n", "secrets must be a list"},
		{"a secret that is not a string", "---\nsecrets: [A, {b: 1}]\n---\n", "item 2 is not a string"},
		{"a secret declared twice", "---\nsecrets: [A, A]\n---\n", "declared twice"},
		{"a secret no environment could hold", "---\nsecrets: [\"A=B\"]\n---\n", "cannot be a secret's name"},
		{"arguments that are no schema", "---\narguments: a string\n---\n", "arguments must be a JSON Schema"},
		{"bad YAML", "---\nkey: [unclosed\n---\n", "front matter"},
		{"front matter never closed", "---\ntitle: x\n# Readme\n", "never closed"},
		{"front matter that is a list", "---\n- a\n- b\n---\n", "must be a mapping"},
		{"a readme key", "---\nreadme: mine\n---\nbody", `"readme" is taken`},
		{"a key twice", "---\na: 1\na: 2\n---\n", "appears twice"},
		{"a value JSON cannot hold", "---\nx: .inf\n---\n", "no JSON form"},
		{"a key that is a list", "---\n[a, b]: 1\n---\n", "a key must be a plain value"},
		{"not UTF-8", "---\na: \xff\n---\n", "not UTF-8"},
		{"an alias that names its parent", "---\na: &a [*a]\n---\n", "front matter"},
		{"a billion laughs", laughs, "expands to more than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			info, err := ParseInfo([]byte(c.file))
			var ie *InfoError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("got %s, %v; want an InfoError saying %q", info.Doc, err, c.says)
			}
		})
	}
}

func TestReadInfo(t *testing.T) {
	dir := t.TempDir()
	if _, found, err := ReadInfo(filepath.Join(dir, "DIVERGE.md")); found || err != nil {
		t.Errorf("missing file: found %v, err %v; want not found", found, err)
	}

	path := filepath.Join(dir, "DIVERGE.md")
	if err := os.WriteFile(path, []byte("---\nsecrets: [K]\n---\nhello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	doc, found, err := ReadInfo(path)
	if !found || err != nil || string(doc) != `{"secrets":["K"],"readme":"hello\n"}` {
		t.Errorf("ReadInfo = %s, %v, %v", doc, found, err)
	}
	info, found, err := LoadInfo(path)
	if !found || err != nil || len(info.Secrets) != 1 {
		t.Errorf("LoadInfo = %+v, %v, %v", info, found, err)
	}

	if err := os.WriteFile(path, []byte("---\nsecrets: K\n---\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, found, err := ReadInfo(path); !found || err == nil {
		t.Errorf("a file that does not parse: found %v, err %v", found, err)
	}
	if _, found, err := ReadInfo(dir); !found || err == nil {
		t.Errorf("a directory: found %v, err %v", found, err)
	}
}
