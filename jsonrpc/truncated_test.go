package jsonrpc

import "testing"

func TestTruncatedResponseIDReadsOnlyAnswers(t *testing.T) {
	tests := []struct {
		name, head, tail, want string
	}{
		{"id before the result", `{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"aaaa`, `aaaa"}]}}`, "7"},
		{"string id", `{"jsonrpc":"2.0","id":"call-1","result":{"x":"`, `"}}`, `"call-1"`},
		{"id after the result", `{"result":{"content":"xxxx`, `xxxx"},"jsonrpc":"2.0","id":12}`, "12"},
		{"id last, jsonrpc after it", `{"result":{"a":"`, `"},"id":"k","jsonrpc":"2.0"}` + "\n", `"k"`},
		{"an error answer", `{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"`, `"}}`, "3"},
		{"a request is no answer", `{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"`, `"}}`, ""},
		{"a notification is no answer", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"`, `"}}`, ""},
		{"method after the id", `{"id":5,"method":"x","params":"`, `"}`, ""},
		{"an id inside the result is not the answer's", `{"result":{"id":99,"blob":"`, `zzz"}}`, ""},
		{"not an object", `["x"`, `]`, ""},
	}
	for _, tt := range tests {
		id, ok := TruncatedResponseID([]byte(tt.head), []byte(tt.tail))
		if got := string(id); ok != (tt.want != "") || got != tt.want {
			t.Errorf("%s: got %q %v, want %q", tt.name, got, ok, tt.want)
		}
	}
}

func FuzzTruncatedResponseID(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"result":{"a`), []byte(`"}}`))
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		if id, ok := TruncatedResponseID(head, tail); ok && !id.IsValid() {
			t.Fatalf("an invalid id %q", id)
		}
	})
}
