// content.go has the typed forms of the results native handlers build:
// tools/call's content envelope, resources/read's contents, prompts/get's
// messages. Relayed results never pass through these types.

package mcp

import "encoding/json"

// Content is one typed content block: text, image, audio, resource (an
// embedded resource) or resource_link.
type Content struct {
	Type        string            `json:"type"`
	Text        string            `json:"text,omitempty"`
	Data        string            `json:"data,omitempty"`     // base64, for image and audio
	MimeType    string            `json:"mimeType,omitempty"` // image, audio
	Resource    *ResourceContents `json:"resource,omitempty"`
	URI         string            `json:"uri,omitempty"` // resource_link
	Name        string            `json:"name,omitempty"`
	Description string            `json:"description,omitempty"`
	Annotations json.RawMessage   `json:"annotations,omitempty"`
	Meta        json.RawMessage   `json:"_meta,omitempty"`
}

// TextContent is a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// ImageContent is an image block with base64 data.
func ImageContent(data, mimeType string) Content {
	return Content{Type: "image", Data: data, MimeType: mimeType}
}

// AudioContent is an audio block with base64 data.
func AudioContent(data, mimeType string) Content {
	return Content{Type: "audio", Data: data, MimeType: mimeType}
}

// EmbeddedResource is a resource block carrying the resource's contents.
func EmbeddedResource(rc ResourceContents) Content { return Content{Type: "resource", Resource: &rc} }

// CallToolResult is the result of tools/call. A tool's output is always
// wrapped in Content; StructuredContent accompanies it when the tool has an
// output schema.
type CallToolResult struct {
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	IsError           bool            `json:"isError,omitempty"`
	Meta              json.RawMessage `json:"_meta,omitempty"`
}

// ResourceContents is one item of resources/read: text or a base64 blob.
type ResourceContents struct {
	URI      string          `json:"uri"`
	MimeType string          `json:"mimeType,omitempty"`
	Text     *string         `json:"text,omitempty"`
	Blob     string          `json:"blob,omitempty"`
	Meta     json.RawMessage `json:"_meta,omitempty"`
}

// TextResource returns text contents for uri.
func TextResource(uri, mimeType, text string) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Text: &text}
}

// BlobResource returns base64 contents for uri.
func BlobResource(uri, mimeType, blob string) ResourceContents {
	return ResourceContents{URI: uri, MimeType: mimeType, Blob: blob}
}

// ReadResourceResult is the result of resources/read.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// PromptMessage is one message of a prompt.
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the result of prompts/get.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
}
