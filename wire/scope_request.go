// scope_request.go is the payload of a request frame (type 1): which
// endpoint the client begins, [tag][content]. Only the tools begin is
// served by this project; the other six tags decode with their content
// kept opaque, so that a server can answer them with a bare finish and a
// client can still send them.

package wire

import (
	"encoding/json"
	"fmt"

	"github.com/mcpgate/mcpgate/jsonrpc"
)

// Scope-opening request tags.
const (
	TagAgentsBegin      uint8 = 0
	TagToolsBegin       uint8 = 1
	TagFuseMount        uint8 = 2
	TagFilesystemTree   uint8 = 3
	TagFilesystemRead   uint8 = 4
	TagFilesystemWrite  uint8 = 5
	TagFilesystemServe  uint8 = 6
	lastScopeRequestTag       = TagFilesystemServe
)

// ScopeRequest is a decoded request payload: BeginTools or OtherBegin.
type ScopeRequest interface {
	// Append appends the payload, tag first, to b.
	Append(b []byte) []byte
	scopeRequest()
}

// BeginTools begins a tool container (tag 1):
// {"arguments": …, "image": {"name": …, "digest": …}}.
type BeginTools struct {
	// Arguments is the begin's arguments, any JSON, as it arrived; nil when
	// the member is absent. It is what the proxy hands the program.
	Arguments json.RawMessage
	// Image names the container's image, for logs; nil when absent.
	Image *Image
}

// Image identifies a container image.
type Image struct {
	Name   string
	Digest string
}

// OtherBegin is a scope-opening request this project does not serve (tags
// 0 and 2–6). Its content is kept as it came.
type OtherBegin struct {
	Tag     uint8
	Content []byte
}

func (BeginTools) scopeRequest() {}
func (OtherBegin) scopeRequest() {}

// Append appends the tag and the begin's JSON object. Only the members
// set are written; Arguments is written as it is.
func (r BeginTools) Append(b []byte) []byte {
	b = append(b, TagToolsBegin, '{')
	if r.Arguments != nil {
		b = append(b, `"arguments":`...)
		b = append(b, r.Arguments...)
	}
	if r.Image != nil {
		if r.Arguments != nil {
			b = append(b, ',')
		}
		b = append(b, `"image":{"name":`...)
		b = jsonrpc.AppendString(b, r.Image.Name)
		b = append(b, `,"digest":`...)
		b = jsonrpc.AppendString(b, r.Image.Digest)
		b = append(b, '}')
	}
	return append(b, '}')
}

// Append appends the tag and the content as they are.
func (r OtherBegin) Append(b []byte) []byte {
	return append(append(b, r.Tag), r.Content...)
}

// DecodeScopeRequest reads a request payload. Raw fields alias p.
func DecodeScopeRequest(p []byte) (ScopeRequest, error) {
	if len(p) == 0 {
		return nil, ErrEmpty
	}
	tag, rest := p[0], p[1:]
	switch {
	case tag == TagToolsBegin:
		return decodeBeginTools(rest)
	case tag <= lastScopeRequestTag:
		return OtherBegin{Tag: tag, Content: orNil(rest)}, nil
	}
	return nil, UnknownTagError{Tag: tag}
}

func decodeBeginTools(b []byte) (ScopeRequest, error) {
	if err := checkJSON(b); err != nil {
		return nil, BodyError{Err: err}
	}
	if err := requireObject(b, "tools begin"); err != nil {
		return nil, BodyError{Err: err}
	}
	r := BeginTools{Arguments: member(b, "arguments")}
	img := member(b, "image")
	if img == nil || img[0] == 'n' {
		return r, nil
	}
	if img[0] != '{' {
		return nil, BodyError{Err: fmt.Errorf(`field "image" must be an object or null, got %s`, kindName(img[0]))}
	}
	name, err := stringMember(img, "name")
	if err != nil {
		return nil, BodyError{Err: fmt.Errorf("image: %w", err)}
	}
	digest, err := stringMember(img, "digest")
	if err != nil {
		return nil, BodyError{Err: fmt.Errorf("image: %w", err)}
	}
	r.Image = &Image{Name: name, Digest: digest}
	return r, nil
}
